// The torchrun environment, read and checked (src/distributed/rendezvous.ts).
import { distributedEnvironment } from '../src/distributed/rendezvous';

const ENV = { RANK: '3', WORLD_SIZE: '4', LOCAL_RANK: '1', LOCAL_WORLD_SIZE: '2', NODE_RANK: '1', MASTER_ADDR: '10.0.0.1', MASTER_PORT: '29500' };

test('distributedEnvironment reads the torchrun variables, with their defaults', () => {
  expect(distributedEnvironment('t', ENV)).toEqual({ rank: 3, size: 4, localRank: 1, localSize: 2, nodeRank: 1, address: '10.0.0.1:29500' });
  const { LOCAL_RANK, LOCAL_WORLD_SIZE, NODE_RANK, ...bare } = ENV;
  expect(distributedEnvironment('t', { ...bare, GROUP_RANK: '2' })).toEqual({
    rank: 3,
    size: 4,
    localRank: 3,
    localSize: 4,
    nodeRank: 2,
    address: '10.0.0.1:29500',
  });
  expect(distributedEnvironment('t', { ...ENV, MASTER_ADDR: '::1' }).address).toBe('[::1]:29500');
});

test('distributedEnvironment names the call and the variable that is missing or wrong', () => {
  const { WORLD_SIZE, ...noSize } = ENV;
  expect(() => distributedEnvironment('Communicator.fromEnvironment', noSize)).toThrow(/^Communicator.fromEnvironment: WORLD_SIZE is not set/);
  expect(() => distributedEnvironment(undefined, noSize)).toThrow(/^distributedEnvironment: WORLD_SIZE is not set/);
  expect(() => distributedEnvironment('t', { ...ENV, RANK: '4' })).toThrow(/^t: RANK 4 is not below WORLD_SIZE 4/);
  expect(() => distributedEnvironment('t', { ...ENV, RANK: '-1' })).toThrow(/^t: RANK must be a non-negative integer, got "-1"/);
  expect(() => distributedEnvironment('t', { ...ENV, MASTER_PORT: '70000' })).toThrow(/^t: MASTER_PORT must be in \[1, 65535\], got 70000/);
  const { MASTER_ADDR, ...noAddr } = ENV;
  expect(() => distributedEnvironment('t', noAddr)).toThrow(/^t: MASTER_ADDR is not set/);
});

test('distributedEnvironment checks its own arguments', () => {
  expect(() => distributedEnvironment(Symbol('x') as never, ENV)).toThrow(
    /^distributedEnvironment: call must be a string \(the call named in errors\), got symbol Symbol\(x\)/,
  );
  expect(() => distributedEnvironment('t', null as never)).toThrow(/^t: env must be an object of environment variables, got null/);
});
