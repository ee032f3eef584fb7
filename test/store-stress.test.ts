// The hostile-client scenario of scripts/store-stress.ts (issue 29's "Done when"), scaled down for the
// unit suite: 8 ranks in 2 processes pass 200 barriers and 20 set/get rounds each, every answer checked,
// while unauthenticated connections and wrong-token attempts keep coming; the server's memory is sampled.
// The full size (64 ranks, 100,000 barriers, 10,000 set/get, 2,000 + 5,000 attacks) is `npm run stress:store`.
import { runStress } from '../scripts/store-stress';

test('ranks rendezvous and finish their work while hostile clients knock; the server stays small', async () => {
  const r = await runStress({ ranks: 8, barriers: 200, setget: 20, idle: 200, wrong: 100, processes: 2, maxServerMiB: 64 });
  // the whole report where anything below fails (Bun's Jest prints a failed matcher's stack, not its message)
  const shutOutHeld = r.authFailures <= 10 + Math.ceil(r.serverSeconds / 6);
  if (r.failures.length || r.idleOpened < 200 || r.wrongAttempts < 100 || !shutOutHeld || r.memory.growthMiB >= 64 || r.serverKeysAtEnd > 9) {
    console.error(`store-stress report: ${JSON.stringify(r)}`);
  }
  expect(r.failures).toEqual([]);
  expect(r.idleOpened).toBeGreaterThanOrEqual(200);
  expect(r.wrongAttempts).toBeGreaterThanOrEqual(100);
  // the shut-out held: the wrong token was looked at only as often as the budget allows (10 a minute,
  // refilled while the server listened, the attackers' wind-down after the ranks included)
  expect(r.authFailures).toBeLessThanOrEqual(10 + Math.ceil(r.serverSeconds / 6));
  expect(r.memory.growthMiB).toBeLessThan(64);
  expect(r.serverKeysAtEnd).toBeLessThanOrEqual(8 + 1);
}, 120_000);
