// Drives a server with node-redis and ioredis, as applications do: their connection
// handshakes, strings, expiry, pipelines, INFO and SCAN. Usage: node check.js PORT
// Exits non-zero with a message naming the first check that failed.
const { createClient } = require('redis');
const Redis = require('ioredis');
const port = Number(process.argv[2]);
function check(cond, what) { if (!cond) { console.error('FAILED: ' + what); process.exit(1); } }
(async () => {
  const c = createClient({ socket: { host: '127.0.0.1', port } });
  c.on('error', (e) => { console.error('node-redis error', e); process.exit(1); });
  await c.connect();
  check(await c.ping() === 'PONG', 'node-redis ping');
  await c.set('n:a', '1');
  check(await c.get('n:a') === '1', 'node-redis get');
  check((await c.mGet(['n:a', 'n:missing']))[1] === null, 'node-redis mget');
  check(await c.incrBy('n:c', 5) === 5, 'node-redis incrby');
  const results = await Promise.all([...Array(200).keys()].map((i) => c.set('n:k' + i, String(i))));
  check(results.every((r) => r === 'OK'), 'node-redis pipelined sets');
  check(await c.dbSize() >= 202, 'node-redis dbsize');
  await c.quit();

  const io = new Redis({ host: '127.0.0.1', port, lazyConnect: true, enableReadyCheck: true });
  await io.connect();
  check(await io.ping() === 'PONG', 'ioredis ping');
  await io.set('i:a', 'x', 'EX', 100);
  check(await io.get('i:a') === 'x', 'ioredis get');
  check((await io.ttl('i:a')) > 90, 'ioredis ttl');
  const p = io.pipeline();
  for (let i = 0; i < 100; i++) p.set('i:k' + i, i);
  for (let i = 0; i < 100; i++) p.get('i:k' + i);
  const out = await p.exec();
  check(out.length === 200 && out[199][1] === '99', 'ioredis pipeline');
  const info = await io.info('server');
  check(info.includes('redis_version:'), 'ioredis info');
  const [cursor, keys] = await io.scan(0, 'MATCH', 'i:k*', 'COUNT', 1000);
  check(keys.length > 0, 'ioredis scan');
  io.disconnect();
  console.log('node clients OK');
})().catch((e) => { console.error(e); process.exit(1); });
