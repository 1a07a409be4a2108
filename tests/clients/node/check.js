// Drives a server with node-redis and ioredis, as applications do: their connection
// handshakes, strings, expiry, pipelines, transactions (multi/exec, WATCH), scripts
// (defineCommand, over keys of several shards and keys a script builds), functions
// (FUNCTION LOAD, FCALL), Pub/Sub (subscribe, psubscribe, keyspace events), client-side
// caching (CLIENT TRACKING with REDIRECT to a subscriber), streams with a
// consumer group (xadd, xreadgroup, xack, a blocking read woken by another client), INFO
// and SCAN.
// Usage: node check.js PORT
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
  // A transaction over keys that spread over the shards, and an optimistic update.
  const tx = await c.multi().set('n:t1', 'a').incr('n:t2').mGet(['n:t1', 'n:k7']).exec();
  check(tx.length === 3 && tx[1] === 1 && tx[2][0] === 'a' && tx[2][1] === '7',
        'node-redis multi/exec');
  const w = await c.duplicate();
  await w.connect();
  await w.watch('n:t2');
  await c.incr('n:t2');  // another client's write: the transaction must not run
  let aborted = false;
  try {
    await w.multi().set('n:t2', '100').exec();
  } catch (e) {
    aborted = e.constructor.name === 'WatchError';
  }
  check(aborted && (await c.get('n:t2')) === '2', 'node-redis watch aborts');
  await w.quit();
  // A function, as node-redis loads and calls one: it moves a job between two lists
  // (keys that spread over the shards) and marks it under a key it builds itself.
  await c.functionLoad("#!lua name=nodelib\nredis.register_function('nmove', function(keys, args)" +
    " local v = redis.call('RPOPLPUSH', keys[1], keys[2])" +
    " redis.call('HSET', args[1] .. ':' .. v, 'state', 'active') return v end)", { REPLACE: true });
  await c.rPush('n:wait', ['j1', 'j2']);
  check(await c.fCall('nmove', { keys: ['n:wait', 'n:active'], arguments: ['n:job'] }) === 'j2',
        'node-redis fcall');
  check(await c.hGet('n:job:j2', 'state') === 'active', 'node-redis fcall wrote its own key');
  // Pub/Sub as node-redis does it: a dedicated subscriber connection, messages from a
  // publisher on another connection (and so, often, another worker).
  const sub = c.duplicate();
  await sub.connect();
  const got = [];
  await sub.subscribe('n:chan', (msg) => got.push(msg));
  await sub.pSubscribe('n:pat:*', (msg, channel) => got.push(channel + '=' + msg));
  check(await c.publish('n:chan', 'hello') === 1, 'node-redis publish');
  check(await c.publish('n:pat:x', 'p') === 1, 'node-redis publish to a pattern');
  for (let i = 0; i < 100 && got.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
  check(got.includes('hello') && got.includes('n:pat:x=p'), 'node-redis subscribe/pSubscribe');
  await sub.quit();
  // A job stream with a consumer group: add, read for a consumer, acknowledge.
  await c.xAdd('n:jobs', '*', { task: 'resize', id: '1' });
  await c.xGroupCreate('n:jobs', 'workers', '0');
  const batch = await c.xReadGroup('workers', 'w1', { key: 'n:jobs', id: '>' }, { COUNT: 10 });
  check(batch && batch[0].messages.length === 1 && batch[0].messages[0].message.task === 'resize',
        'node-redis xReadGroup');
  check(await c.xAck('n:jobs', 'workers', batch[0].messages[0].id) === 1, 'node-redis xAck');
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
  const m = await io.multi().set('i:m', 'v').incr('i:mc').lpush('i:ml', 'x', 'y').lrange('i:ml', 0, -1).exec();
  check(m.length === 4 && m[0][1] === 'OK' && m[1][1] === 1 && m[3][1].join() === 'y,x',
        'ioredis multi/exec');
  const bad = await io.multi().set('i:s', 'x').incr('i:s').get('i:s').exec();
  check(bad[1][0] !== null && bad[2][1] === 'x', 'ioredis multi/exec with a runtime error');
  // A script as applications define one: ioredis sends EVALSHA and falls back to EVAL.
  io.defineCommand('bumpBy', {
    numberOfKeys: 1,
    lua: "return redis.call('INCRBY', KEYS[1], ARGV[1])",
  });
  check(await io.bumpBy('{s}n', 5) === 5 && await io.bumpBy('{s}n', 2) === 7,
        'ioredis defineCommand');
  // A job queue's shape: two lists without a common {hashtag}, and a key built at run time.
  io.defineCommand('moveJob', {
    numberOfKeys: 2,
    lua: "local id = redis.call('RPOPLPUSH', KEYS[1], KEYS[2]) " +
         "if id then redis.call('HSET', 'i:job:' .. id, 'state', 'active') end return id",
  });
  await io.rpush('i:wait', 'a', 'b', 'c');
  check(await io.moveJob('i:wait', 'i:active') === 'c' && await io.moveJob('i:wait', 'i:active') === 'b',
        'ioredis defineCommand over shards');
  check(await io.hget('i:job:b', 'state') === 'active' && await io.llen('i:active') === 2,
        'ioredis defineCommand wrote its own keys');
  // ioredis Pub/Sub: subscribe and psubscribe events, keyspace notifications.
  const isub = new Redis({ host: '127.0.0.1', port });
  const seen = [];
  isub.on('message', (ch, msg) => seen.push(ch + ':' + msg));
  isub.on('pmessage', (pat, ch, msg) => seen.push(pat + '|' + ch + ':' + msg));
  await isub.subscribe('i:news');
  await isub.psubscribe('__keyspace@0__:i:watched');
  await io.config('SET', 'notify-keyspace-events', 'K$');
  check(await io.publish('i:news', 'n1') === 1, 'ioredis publish');
  await io.set('i:watched', 'v');
  for (let i = 0; i < 100 && seen.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
  await io.config('SET', 'notify-keyspace-events', '');
  check(seen.includes('i:news:n1') &&
        seen.includes('__keyspace@0__:i:watched|__keyspace@0__:i:watched:set'),
        'ioredis subscribe/psubscribe and keyspace events');
  isub.disconnect();
  // Client-side caching as a RESP2 client does it: invalidations redirected to a
  // connection subscribed to __redis__:invalidate (the keys come as one array).
  const inval = new Redis({ host: '127.0.0.1', port });
  const invalId = await inval.client('ID');
  const invalidated = [];
  inval.on('message', (ch, msg) => { if (ch === '__redis__:invalidate') invalidated.push(msg); });
  await inval.subscribe('__redis__:invalidate');
  const cached = new Redis({ host: '127.0.0.1', port });
  check(await cached.client('TRACKING', 'ON', 'REDIRECT', invalId) === 'OK',
        'ioredis CLIENT TRACKING ON REDIRECT');
  await io.set('i:cached', 'v1');
  check(await cached.get('i:cached') === 'v1', 'ioredis tracked read');
  await io.set('i:cached', 'v2');
  for (let i = 0; i < 100 && invalidated.length < 1; i++) await new Promise((r) => setTimeout(r, 20));
  check(invalidated.length === 1 && invalidated[0] === 'i:cached',
        'ioredis invalidation on __redis__:invalidate: ' + JSON.stringify(invalidated));
  cached.disconnect();
  inval.disconnect();
  // A blocking stream read, woken by an XADD from another connection.
  const reader = new Redis({ host: '127.0.0.1', port });
  const pending = reader.xread('BLOCK', 5000, 'STREAMS', 'i:events', '$');
  await new Promise((r) => setTimeout(r, 100));
  await io.xadd('i:events', '*', 'kind', 'signup');
  const read = await pending;
  check(read && read[0][0] === 'i:events' && read[0][1][0][1][1] === 'signup',
        'ioredis xread BLOCK woken by xadd');
  reader.disconnect();
  const info = await io.info('server');
  check(info.includes('redis_version:'), 'ioredis info');
  const [cursor, keys] = await io.scan(0, 'MATCH', 'i:k*', 'COUNT', 1000);
  check(keys.length > 0, 'ioredis scan');
  io.disconnect();
  console.log('node clients OK');
})().catch((e) => { console.error(e); process.exit(1); });
