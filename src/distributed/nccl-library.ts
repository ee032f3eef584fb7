// NCCL as the communicator uses it: its layers (loaded on first use), its dtype and operator tables, and
// the error saying NCCL is missing.
import { loadNccl, loadNcclRaw, ncclTypes, type nccl } from '../releases';
import { CudaLibraryError } from '../../support';
import type { NcclDtype, ReduceOp } from './communicator-options';

const { ncclDataType_t: DT, ncclRedOp_t: OP } = ncclTypes;

// NCCL's typed and raw layers load on first use (src/releases.ts): importing the objects layer loads neither.
/** NCCL's typed layer. */
export const ncclApi = loadNccl;
/** NCCL's raw layer. */
export const ncclRaw = loadNcclRaw;
/** NCCL's error for a failed `call`. */
export function ncclError(call: string, status: number): nccl.NcclError {
  return new (ncclApi().NcclError)(call, status);
}

/** The ncclDataType_t (`type`) and element size in bytes (`bytes`) of each dtype. */
export const NCCL_DTYPES: Readonly<
  Record<
    NcclDtype,
    {
      /** The NCCL data type. */
      readonly type: nccl.ncclDataType_t;
      /** Element size in bytes. */
      readonly bytes: number;
    }
  >
> = Object.freeze({
  i8: { type: DT.ncclInt8, bytes: 1 },
  u8: { type: DT.ncclUint8, bytes: 1 },
  i32: { type: DT.ncclInt32, bytes: 4 },
  u32: { type: DT.ncclUint32, bytes: 4 },
  i64: { type: DT.ncclInt64, bytes: 8 },
  u64: { type: DT.ncclUint64, bytes: 8 },
  f16: { type: DT.ncclFloat16, bytes: 2 },
  bf16: { type: DT.ncclBfloat16, bytes: 2 },
  f32: { type: DT.ncclFloat32, bytes: 4 },
  f64: { type: DT.ncclFloat64, bytes: 8 },
  f8e4m3: { type: DT.ncclFloat8e4m3, bytes: 1 },
  f8e5m2: { type: DT.ncclFloat8e5m2, bytes: 1 },
});

/** The ncclRedOp_t of each reduction operator. */
export const NCCL_OPS: Readonly<Record<ReduceOp, nccl.ncclRedOp_t>> = Object.freeze({
  sum: OP.ncclSum,
  prod: OP.ncclProd,
  max: OP.ncclMax,
  min: OP.ncclMin,
  avg: OP.ncclAvg,
});

const has = (o: object, k: unknown): boolean => typeof k === 'string' && Object.prototype.hasOwnProperty.call(o, k);

/** `dtype` as ncclDataType_t plus its element size; TypeError naming `call` for anything else. */
export function ncclDataType(dtype: unknown, call = 'ncclDataType'): { type: nccl.ncclDataType_t; bytes: number } {
  if (!has(NCCL_DTYPES, dtype)) {
    throw new TypeError(`${call}: dtype must be one of ${Object.keys(NCCL_DTYPES).join(', ')}; got ${dtype === undefined ? 'none' : JSON.stringify(dtype)}`);
  }
  return NCCL_DTYPES[dtype as NcclDtype];
}

/** `op` as ncclRedOp_t; TypeError naming `call` for anything else. */
export function ncclRedOp(op: unknown, call = 'ncclRedOp'): nccl.ncclRedOp_t {
  if (!has(NCCL_OPS, op)) throw new TypeError(`${call}: op must be one of ${Object.keys(NCCL_OPS).join(', ')}; got ${JSON.stringify(op)}`);
  return NCCL_OPS[op as ReduceOp];
}

/** NCCL (libnccl.so.2) could not be loaded. `tried` lists every path searched. */
export class NcclUnavailableError extends CudaLibraryError {
  /**
   * Made by the objects layer: `call` names the call that needed NCCL, `cause` is the loader's error.
   * @param call The call that needed NCCL, named in the message.
   * @param cause The loader's error, with the paths it tried.
   */
  constructor(call: string, cause: CudaLibraryError) {
    super('nccl', 'NCCL is not installed or not found', cause.tried);
    this.message =
      `${call} needs NCCL (libnccl.so.2), which could not be loaded: install NCCL (e.g. apt install libnccl2, or pip install nvidia-nccl-cu13) ` +
      `or set CUDA_TS_NCCL_LIBRARY to the library's path.${cause.tried.length ? `\n  tried:\n    ${cause.tried.join('\n    ')}` : ''}`;
  }
}

let ncclLoaded = false;
/** Loads libnccl now, or throws NcclUnavailableError naming `call`. */
export function requireNccl(call: string): void {
  if (ncclLoaded) return;
  try {
    ncclApi().binder.library();
  } catch (e) {
    if (e instanceof CudaLibraryError) throw new NcclUnavailableError(call, e);
    throw e;
  }
  ncclLoaded = true;
}
