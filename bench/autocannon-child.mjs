// autocannon in a process of its own (a client on another machine would be), with what its CLI
// cannot do: each request takes the next of several header sets, so a route can be loaded by many
// users at once (one token per user). Prints autocannon's result as JSON on stdout.
// Run: node bench/autocannon-child.mjs <file with JSON: { url, connections, duration, method, body, headerSets }>
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';

const o = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const sets = o.headerSets.length > 0 ? o.headerSets : [{}];
let next = 0;
const result = await autocannon({
  url: o.url,
  connections: o.connections,
  duration: o.duration,
  method: o.method,
  body: o.body,
  requests: [
    {
      setupRequest: (req) => ({ ...req, headers: { ...req.headers, ...sets[next++ % sets.length] } }),
    },
  ],
});
process.stdout.write(JSON.stringify(result));
