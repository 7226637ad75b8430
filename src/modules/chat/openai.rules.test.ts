import { describe, expect, it } from 'vitest';
import { errorType, openAiError, parseModel, replyContent, turnText } from './openai.rules.js';

describe('parseModel', () => {
  it.each([
    ['assistant', { kind: 'assistant' }],
    ['npc:7', { kind: 'npc', npcUserId: 7 }],
    ['npc:0', undefined],
    ['npc:07', undefined],
    ['npc:', undefined],
    ['gpt-4o', undefined],
    ['Assistant', undefined],
  ])('%s', (model, expected) => expect(parseModel(model)).toEqual(expected));
});

describe('turnText', () => {
  it.each([
    [[{ role: 'user', content: 'hi' }], 'hi'],
    [
      [
        { role: 'system', content: 's' },
        { role: 'user', content: 'hi' },
      ],
      'hi',
    ],
    [
      [
        {
          role: 'user',
          content: [{ type: 'text', text: 'a' }, { type: 'image_url' }, { type: 'text', text: 'b' }],
        },
      ],
      'a\nb',
    ],
    [
      [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'hello' },
      ],
      undefined,
    ],
    [[{ role: 'user', content: '   ' }], undefined],
    [[{ role: 'user', content: null }], undefined],
    [[], undefined],
  ])('%j', (messages, expected) => expect(turnText(messages)).toBe(expected));
});

describe('errors', () => {
  it.each([
    [400, 'invalid_request_error'],
    [401, 'authentication_error'],
    [403, 'permission_error'],
    [404, 'not_found_error'],
    [409, 'invalid_request_error'],
    [429, 'rate_limit_error'],
    [502, 'api_error'],
  ])('%i is %s', (status, type) => expect(errorType(status)).toBe(type));

  it('names the first field at fault, without the part of the request it is in', () => {
    expect(
      openAiError({
        status: 400,
        detail: 'The request is not valid',
        code: 'validation_failed',
        errors: [{ path: 'body.messages.0.role', message: 'invalid option' }],
      }),
    ).toEqual({
      error: {
        message: 'The request is not valid: messages.0.role: invalid option',
        type: 'invalid_request_error',
        param: 'messages.0.role',
        code: 'validation_failed',
      },
    });
    expect(openAiError({ status: 429, detail: 'Too many', code: 'rate_limited' }).error).toEqual({
      message: 'Too many',
      type: 'rate_limit_error',
      param: null,
      code: 'rate_limited',
    });
  });
});

describe('replyContent', () => {
  const r = (npcName: string, text: string) => ({ messageId: 1, npcName, text, createdAt: '' });
  it('is one reply, or several under their speakers’ names', () => {
    expect(replyContent([r('Mira', 'Hot.')])).toBe('Hot.');
    expect(replyContent([r('Mira', 'Hot.'), r('Oren', 'Calm.')])).toBe('Mira: Hot.\n\nOren: Calm.');
  });
});
