// The slash commands built from the command definitions, and interaction options read back as
// arguments; without network.
import { describe, expect, it } from 'vitest';
import { coerceArgs, commandByName, COMMANDS } from './chat-platform.commands.rules.js';
import {
  interactionArgs,
  isDiscordId,
  messageText,
  optionName,
  slashCommand,
} from './chat-platform.discord.rules.js';

// Discord's rules for chat-input commands and their options.
const NAME = /^[-_\p{L}\p{N}]{1,32}$/u;

describe('slashCommand', () => {
  it('builds one chat-input command per definition, each valid for Discord', () => {
    const commands = COMMANDS.map(slashCommand);
    expect(commands.map((c) => c.name)).toEqual(COMMANDS.map((c) => c.name));
    for (const c of commands) {
      expect(c.type).toBe(1);
      expect(c.name).toMatch(NAME);
      expect(c.name).toBe(c.name.toLowerCase());
      expect(c.description.length).toBeGreaterThan(0);
      expect(c.description.length).toBeLessThanOrEqual(100);
      expect(c.options!.length).toBeLessThanOrEqual(25);
      const required = c.options!.map((o) => ('required' in o && o.required) === true);
      // Required options come first.
      expect(required).toEqual([...required].sort((a, b) => Number(b) - Number(a)));
      for (const o of c.options!) {
        expect(o.name).toMatch(NAME);
        expect(o.name).toBe(o.name.toLowerCase());
        expect(o.description.length).toBeLessThanOrEqual(100);
      }
    }
  });

  it('types the options and gives choices', () => {
    expect(slashCommand(commandByName('observer-assign')!)).toEqual({
      type: 1,
      name: 'observer-assign',
      description: 'Assign a task to a persona, optionally moving its status',
      options: [
        { type: 3, name: 'task_id', description: 'The task id', required: true },
        { type: 4, name: 'persona_id', description: "The persona's (character's) user id", required: true },
        {
          type: 3,
          name: 'status',
          description: 'The status to move the task to',
          required: false,
          choices: ['pending', 'in_progress', 'completed', 'blocked'].map((s) => ({ name: s, value: s })),
        },
      ],
    });
    expect(
      slashCommand(commandByName('observer-artifact-review')!).options!.map((o) => [o.name, o.type]),
    ).toEqual([
      ['artifact_id', 3],
      ['approve', 5],
    ]);
    expect(slashCommand(commandByName('observer-evidence')!).options!.map((o) => o.name)).toEqual([
      'instance_id',
      'description',
      'proof_url',
    ]);
  });
});

describe('optionName', () => {
  it.each([
    ['instance_id', 'instance_id'],
    ['proofUrl', 'proof_url'],
    ['approve', 'approve'],
  ])('%s → %s', (arg, option) => {
    expect(optionName(arg)).toBe(option);
  });
});

describe('interactionArgs', () => {
  const evidence = commandByName('observer-evidence')!;
  const assign = commandByName('observer-assign')!;

  it('names options as the command names its arguments', () => {
    expect(
      interactionArgs(evidence, [
        { name: 'instance_id', value: 'i' },
        { name: 'description', value: 'Demo' },
        { name: 'proof_url', value: 'https://demo.example/' },
      ]),
    ).toEqual({ instance_id: 'i', description: 'Demo', proofUrl: 'https://demo.example/' });
  });

  it('hands values to the same coercion as the endpoint; an option without value is absent', () => {
    const args = interactionArgs(assign, [
      { name: 'task_id', value: 't' },
      { name: 'persona_id', value: 7 },
      { name: 'status', value: undefined },
    ]);
    expect(args).toEqual({ task_id: 't', persona_id: 7 });
    expect(coerceArgs(assign, args)).toEqual({ ok: true, args: { task_id: 't', persona_id: 7 } });
  });

  it('keeps an option no argument has, so the command refuses it', () => {
    const args = interactionArgs(assign, [
      { name: 'task_id', value: 't' },
      { name: 'persona_id', value: 7 },
      { name: 'colour', value: 'red' },
    ]);
    expect(coerceArgs(assign, args)).toMatchObject({ ok: false, errors: [{ path: 'args.colour' }] });
  });
});

describe('isDiscordId', () => {
  it.each([
    ['123456789012345678', true],
    ['12345678901234567', true],
    ['12345678901234567890', true],
    ['1234567890123456', false],
    ['123456789012345678901', false],
    ['channel-1', false],
    ['', false],
  ])('%j → %s', (id, expected) => {
    expect(isDiscordId(id)).toBe(expected);
  });
});

describe('messageText', () => {
  const BOT = '500000000000000001';
  it.each([
    [`<@${BOT}> hello there`, 'hello there'],
    [`hello <@!${BOT}>, how are you?`, 'hello , how are you?'],
    [`<@${BOT}>`, ''],
    [`ask <@600000000000000001> and <@${BOT}>  too`, 'ask <@600000000000000001> and too'],
    ['line one\n<@' + BOT + '> line two', 'line one\n line two'],
    ['no mention at all', 'no mention at all'],
  ])('%j → %j', (content, text) => {
    expect(messageText(content, BOT)).toBe(text);
  });
});
