// Drives a one-node cluster (strata's cluster-enabled emulated, or a redis-server that
// owns every slot) with the cluster clients of ioredis and node-redis, as applications
// do: topology discovery from CLUSTER SLOTS, keys over many slots, pipelines, keys that
// share a hash tag in one MGET and one transaction.
// Usage: node cluster_check.js PORT
// Exits non-zero with a message naming the first check that failed.
const { createCluster } = require('redis');
const Redis = require('ioredis');
const port = Number(process.argv[2]);
function check(cond, what) { if (!cond) { console.error('FAILED: ' + what); process.exit(1); } }
(async () => {
  const io = new Redis.Cluster([{ host: '127.0.0.1', port }], { enableReadyCheck: true });
  await new Promise((resolve, reject) => { io.once('ready', resolve); io.once('error', reject); });
  check(io.nodes('master').length === 1, 'ioredis sees one master');
  const keys = [...Array(500).keys()].map((i) => 'io:' + i);
  await Promise.all(keys.map((k) => io.set(k, k.toUpperCase())));
  const values = await Promise.all(keys.map((k) => io.get(k)));
  check(values.every((v, i) => v === keys[i].toUpperCase()), 'ioredis cluster get/set');
  const p = io.pipeline();
  p.set('{io}.a', '1');
  p.incr('{io}.b');
  p.mget('{io}.a', '{io}.b');
  const res = await p.exec();
  check(res[2][1][0] === '1' && res[2][1][1] === '1', 'ioredis cluster pipeline with a hash tag');
  const tx = await io.multi().incr('{io}.b').get('{io}.a').exec();
  check(tx[0][1] === 2 && tx[1][1] === '1', 'ioredis cluster multi/exec');
  await io.quit();

  const nr = createCluster({ rootNodes: [{ socket: { host: '127.0.0.1', port } }] });
  nr.on('error', (e) => { console.error('node-redis cluster error', e); process.exit(1); });
  await nr.connect();
  await Promise.all(keys.map((k) => nr.set('nr:' + k, k)));
  const back = await Promise.all(keys.map((k) => nr.get('nr:' + k)));
  check(back.every((v, i) => v === keys[i]), 'node-redis cluster get/set');
  check((await nr.mGet(['{nr}.x', '{nr}.y']))[0] === null, 'node-redis cluster mget');
  await nr.quit();
  console.log('node cluster clients OK');
})().catch((e) => { console.error('FAILED: ' + e.stack); process.exit(1); });
