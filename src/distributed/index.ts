// Processes that meet: the TCP store, the torchrun environment, the launcher. No CUDA in here;
// Communicator.rendezvous / fromEnvironment (src/communicator.ts) build NCCL ranks on top of it.
export {
  StoreServer, TcpStore, StoreError, StoreTimeoutError, openStore, parseAddress, storeToken, STORE_TOKEN_ENV,
  type OpenStoreOptions, type StoreConnectOptions, type StoreLimits, type StoreServerOptions,
} from './store';
export { distributedEnvironment, type DistributedEnvironment } from './rendezvous';
export { launchRanks, parseLauncherArgs, type LaunchOptions } from './launcher';
