// `npm run cli -- chat`: a terminal chat with the assistant of a running server, through the typed
// client. Signs in (asking for what the options did not give), then each line typed is a message:
// the reply streams in as it is written, and the suggested replies are listed by number (typing
// the number sends that one). `/new` starts a conversation, `/quit` or the end of input leaves.
import { createInterface } from 'node:readline';
import { Writable, type Readable } from 'node:stream';
import { ApiError, createClient, type Choice } from '../client/index.js';

export interface ChatOptions {
  url: string;
  email?: string | undefined;
  password?: string | undefined;
}

export interface Terminal {
  input: Readable;
  output: NodeJS.WritableStream & { isTTY?: boolean };
}

export async function runChat(opts: ChatOptions, term: Terminal): Promise<void> {
  const out = (text: string) => void term.output.write(text);
  // Typing a password on a terminal is not echoed: readline writes through this gate.
  let muted = false;
  const gate = new Writable({
    write(chunk: Buffer, _enc, done) {
      if (!muted) term.output.write(chunk);
      done();
    },
  });
  const rl = createInterface({ input: term.input, output: gate, terminal: term.output.isTTY === true });
  const lines: string[] = [];
  const waiting: ((line: string | null) => void)[] = [];
  let closed = false;
  rl.on('line', (line) => {
    const w = waiting.shift();
    if (w) w(line);
    else lines.push(line);
  });
  rl.on('close', () => {
    closed = true;
    for (const w of waiting.splice(0)) w(null);
  });
  /** The next line typed, or null at the end of input. */
  const ask = (prompt: string, hidden = false): Promise<string | null> => {
    out(prompt);
    const queued = lines.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    if (closed) return Promise.resolve(null);
    muted = hidden && term.output.isTTY === true;
    return new Promise<string | null>((resolve) => waiting.push(resolve)).finally(() => {
      if (muted) out('\n');
      muted = false;
    });
  };

  try {
    const client = createClient({ baseUrl: opts.url });
    const email = opts.email ?? (await ask('email: '));
    const password = opts.password ?? (email === null ? null : await ask('password: ', true));
    if (email === null || password === null) return;
    const session = await client.login(email, password);
    const chat = await client.chat();
    out(`signed in as ${session.user.name} at ${opts.url}; /new starts a conversation, /quit leaves\n`);

    let conversationId: number | undefined;
    let choices: Choice[] = [];
    try {
      for (;;) {
        const line = await ask('you> ');
        if (line === null || line.trim() === '/quit') break;
        let message = line.trim();
        if (!message) continue;
        if (message === '/new') {
          const { data, error } = await client.api.POST('/api/conversations', { body: {} });
          if (error) throw new ApiError(error);
          conversationId = data.id;
          choices = [];
          out(`new conversation ${conversationId}\n`);
          continue;
        }
        const picked = /^\d+$/.test(message) ? choices[Number(message) - 1] : undefined;
        if (picked) message = picked.text;

        // Each reply's streamed text under its speaker's name; a reply that did not stream (a
        // group scene's characters) is printed whole when it arrives.
        let streaming: number | undefined;
        const streamed = new Set<number>();
        // Trailing white space is held back until more text follows (a reply's text ends trimmed).
        let held = '';
        try {
          const turn = await chat.send(message, {
            conversationId,
            onDelta: (text, e) => {
              if (streaming !== e.messageId) {
                if (streaming !== undefined) out('\n');
                out('assistant> ');
                streaming = e.messageId;
                streamed.add(e.messageId);
                held = '';
              }
              const all = held + text;
              const visible = all.trimEnd();
              held = all.slice(visible.length);
              out(visible);
            },
          });
          if (streaming !== undefined) out('\n');
          for (const r of turn.replies) if (!streamed.has(r.messageId)) out(`${r.npcName}> ${r.text}\n`);
          conversationId = turn.conversationId;
          choices = turn.choices;
          choices.forEach((c, i) => out(`  ${i + 1}) ${c.text}\n`));
        } catch (err) {
          if (streaming !== undefined) out('\n');
          // A refused turn (rate limit, validation) is said and the chat goes on.
          if (!(err instanceof ApiError)) throw err;
          out(`error: ${err.problem.detail}\n`);
        }
      }
    } finally {
      chat.close();
      await client.logout().catch(() => undefined);
    }
    out('bye\n');
  } finally {
    rl.close();
  }
}
