// Child process of bench/realtime.ts: the load generator. Sends POST /api/sync/ingest-event at a
// steady (open-loop) rate from a process of its own, as a game server on another machine would,
// so the service's event loop is the service's alone. Each event carries its send time
// (metadata.sentAt: performance.timeOrigin + performance.now(), wall-clock based, which processes
// on one machine share to well under a millisecond). Prints one JSON line: the count sent, the
// time it took, HTTP errors and each request's latency.
// argv[2]: JSON { url, key, userId, observerIds, rate, seconds } (rate = events per second)
const { url, key, userId, observerIds, rate, seconds } = JSON.parse(process.argv[2]);
const now = () => performance.timeOrigin + performance.now();
const total = Math.round(rate * seconds);
const interval = 1000 / rate;
let httpErrors = 0;
const httpLatency = [];
const inflight = [];
const start = now();
for (let i = 0; i < total; i++) {
  const wait = start + i * interval - now();
  if (wait > 1) await new Promise((r) => setTimeout(r, wait));
  const sentAt = now();
  inflight.push(
    fetch(`${url}/api/sync/ingest-event`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({
        userId,
        eventType: 'bench',
        metadata: { instanceId: observerIds[i % observerIds.length], sentAt },
      }),
    }).then(
      async (res) => {
        await res.arrayBuffer();
        if (res.status !== 201) httpErrors++;
        httpLatency.push(now() - sentAt);
      },
      () => {
        httpErrors++;
      },
    ),
  );
}
await Promise.all(inflight);
const sendSeconds = (now() - start) / 1000;
process.stdout.write(JSON.stringify({ total, sendSeconds, httpErrors, httpLatency }) + '\n');
