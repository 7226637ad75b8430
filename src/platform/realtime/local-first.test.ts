// `localFirst` (local-first.ts) publishes a broadcast itself instead of through socket.io-adapter's
// `ClusterAdapter.broadcast` (local-first.ts says why), so it copies the library's message encoding,
// which the library does not export. This holds the copy to the library: the message published
// for a broadcast must be the one the library's own `broadcast` publishes, on the version range it
// was checked on (package.json pins ~2.5.8). A change of either fails here first.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Server, type Namespace } from 'socket.io';
import { ClusterAdapter, type BroadcastOptions, type ClusterMessage } from 'socket.io-adapter';
import { describe, expect, it } from 'vitest';
import { localFirst } from './local-first.js';

/** A cluster adapter that records what it would publish to the other nodes. */
class Recording extends ClusterAdapter {
  readonly published: ClusterMessage[] = [];
  constructor(nsp: Namespace) {
    super(nsp);
  }
  protected override doPublish(message: ClusterMessage): Promise<string> {
    this.published.push(structuredClone(message));
    return Promise.resolve('');
  }
  protected override doPublishResponse(): Promise<void> {
    return Promise.resolve();
  }
}

describe('localFirst and socket.io-adapter', () => {
  it('is the version range it was checked on (2.5.x)', () => {
    const manifest = createRequire(import.meta.url).resolve('socket.io-adapter/package.json');
    const { version } = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string };
    expect(version).toMatch(/^2\.5\./);
  });

  it('publishes a broadcast as the library’s own broadcast does', async () => {
    const io = new Server();
    const nsp = io.of('/');
    const library = new Recording(nsp);
    const ours = localFirst((n) => new Recording(n))(nsp) as Recording;
    const packet = { type: 2, data: ['timeline_update', { id: 7 }], nsp: '/' };
    const cases: BroadcastOptions[] = [
      { rooms: new Set(['observer:1', 'observer:2']), except: new Set(['s1']), flags: { volatile: true } },
      { rooms: new Set(), except: new Set() },
    ];
    for (const opts of cases) {
      await library.broadcast(packet, opts);
      await ours.broadcast(packet, opts);
    }
    const withoutSender = (m: ClusterMessage) => ({ ...m, uid: 'sender' });
    expect(ours.published.map(withoutSender)).toEqual(library.published.map(withoutSender));
    expect(ours.published).toHaveLength(2);
  });
});
