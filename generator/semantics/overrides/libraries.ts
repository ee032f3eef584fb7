// The math and tool libraries (NCCL, cuFFT, cuFile, CUPTI, cuBLASLt, cuSOLVER): their headers document
// few parameters, and non-const pointers there are mostly device data, so the outputs are listed here.
import type { Elem, ModuleOverrides, Override } from '../model';

const i32: Elem = { t: 'int', bits: 32, signed: true };
const size: Elem = { t: 'int', bits: 64, signed: false, size: true };
const address: Elem = { t: 'address' };
const raw = (reason: string, extra: { size?: string; retained?: boolean; dir?: 'in' | 'out' | 'inout' } = {}): Override => ({
  sem: { role: 'pointer', nullable: false, ...extra },
  reason,
});
/** Caller memory the call only reads, though the header's pointer is non-const. */
const read = (reason: string, extra: { size?: string } = {}): Override => raw(reason, { ...extra, dir: 'in' });

export const nccl: ModuleOverrides = {
  params: {
    'ncclCommInitAll.comm': {
      sem: { role: 'pointer', nullable: false, dir: 'out', space: 'host', count: { param: 'ndev', unit: 'elements', elem: 'ncclComm_t', elemBytes: 8 } },
      reason: 'ndev communicators written into caller memory (ncclComm_t[ndev], e.g. a BigUint64Array(ndev))',
    },
    'ncclGetUniqueId.uniqueId': {
      sem: { role: 'outRecord', record: 'ncclUniqueId' },
      reason: 'one id returned (a record behind a non-const pointer reads as data in NCCL)',
    },
    'ncclCommCuDevice.device': {
      sem: { role: 'out', elem: i32 },
      reason: 'the CUDA device number returned (int *), as ncclCommCount and ncclCommUserRank return theirs; not device memory',
    },
  },
};

export const cufft: ModuleOverrides = {
  params: {
    'cufftXtSetWorkArea.workArea': read('an array of work-area addresses the call reads (void **), one per GPU'),
    'cufftXtSetWorkAreaPolicy.workSize': {
      sem: { role: 'pointer', nullable: true, dir: 'in' },
      reason: 'reserved: the call does not write it (NULL is fine); not a size returned',
    },
    'cufftXtSetCallback.callback_routine': read('an array of device callback addresses the call reads (void **), one per GPU'),
    'cufftXtSetCallback.caller_info': read('an array of device addresses the call reads (void **), one per GPU'),
    'cufftXtSetJITCallback.caller_info': read('an array of device addresses the call reads (void **), one per GPU'),
    'cufftGetPlanPropertyInt64.returnPtrValue': {
      sem: { role: 'out', elem: { t: 'int', bits: 64, signed: true } },
      reason: 'the property value returned (long long *), the getter of cufftSetPlanPropertyInt64',
    },
  },
};

const ASYNC = 'read or written by the stream when the operation runs, after the call returns: caller memory kept alive until the stream passes it';
export const cufile: ModuleOverrides = {
  params: {
    'cuFileHandleRegister.descr': {
      sem: { role: 'inRecord', record: 'CUfileDescr_t', nullable: false },
      reason: 'the file descriptor record the call reads (non-const in the header)',
    },
    'cuFileReadAsync.size_p': raw(ASYNC, { retained: true }),
    'cuFileReadAsync.file_offset_p': raw(ASYNC, { retained: true }),
    'cuFileReadAsync.bufPtr_offset_p': raw(ASYNC, { retained: true }),
    'cuFileReadAsync.bytes_read_p': raw(ASYNC, { retained: true }),
    'cuFileWriteAsync.size_p': raw(ASYNC, { retained: true }),
    'cuFileWriteAsync.file_offset_p': raw(ASYNC, { retained: true }),
    'cuFileWriteAsync.bufPtr_offset_p': raw(ASYNC, { retained: true }),
    'cuFileWriteAsync.bytes_written_p': raw(ASYNC, { retained: true }),
    'cuFileBatchIOSubmit.iocbp': {
      sem: { role: 'inArray', elem: { t: 'record', name: 'CUfileIOParams', size: 88 }, count: 'nr', nullable: false },
      reason: 'nr I/O requests the call reads (non-const in the header)',
    },
    'cuFileBatchIOSubmit.nr': { sem: { role: 'count', of: ['iocbp'] }, reason: 'the length of iocbp' },
    'cuFileRead.fh': { sem: { role: 'pointer', nullable: false, dir: 'in' }, reason: 'a file handle (void *), not the memory the size covers' },
    'cuFileWrite.fh': { sem: { role: 'pointer', nullable: false, dir: 'in' }, reason: 'a file handle (void *), not the memory the size covers' },
  },
};

export const cupti: ModuleOverrides = {
  params: {
    'cuptiEnumEventDomains.arraySizeBytes': {
      sem: { role: 'inout', elem: size },
      reason: 'capacity in bytes in, bytes written out (a byte count: the resolver pairs element counts only)',
    },
    'cuptiEnumEventDomains.domainArray': raw('caller memory of arraySizeBytes bytes (size it with cuptiGetNumEventDomains)'),
    'cuptiDeviceEnumEventDomains.arraySizeBytes': { sem: { role: 'inout', elem: size }, reason: 'capacity in bytes in, bytes written out' },
    'cuptiDeviceEnumEventDomains.domainArray': raw('caller memory of arraySizeBytes bytes (size it with cuptiDeviceGetNumEventDomains)'),
    'cuptiEventGroupSetsCreate.eventIdArray': read('event ids the call reads, eventIdArraySizeBytes bytes', { size: 'eventIdArraySizeBytes' }),
    'cuptiEventGroupSetsCreate.eventGroupPasses': { sem: { role: 'out', elem: address }, reason: 'the address of the CUpti_EventGroupSets the call allocates' },
    'cuptiEventGroupSetEnable.eventGroupSet': read('a set inside the CUpti_EventGroupSets the library returned: its address, read by the call'),
    'cuptiEventGroupSetDisable.eventGroupSet': read('a set inside the CUpti_EventGroupSets the library returned: its address, read by the call'),
    'cuptiActivityConfigurePCSampling.config': {
      sem: { role: 'inRecord', record: 'CUpti_ActivityPCSamplingConfig', nullable: false },
      reason: 'the sampling configuration the call reads (non-const in the header)',
    },
    'cuptiActivityGetNextRecord.record': {
      sem: { role: 'inout', elem: address },
      reason: 'NULL for the first record, then the previous record: the next one is returned in place',
    },
    'cuptiActivityGetAttribute.valueSize': { sem: { role: 'inout', elem: size }, reason: 'the size of value in, bytes written out' },
    'cuptiActivitySetAttribute.valueSize': { sem: { role: 'inout', elem: size }, reason: 'the size of value in' },
    'cuptiEventGroupReadEvent.eventValueBufferSizeBytes': { sem: { role: 'inout', elem: size }, reason: 'capacity in bytes in, bytes written out' },
    'cuptiEventGroupReadEvent.eventValueBuffer': raw('caller memory of eventValueBufferSizeBytes bytes (one value per domain instance when propagated)'),
  },
};

export const cublas: ModuleOverrides = {
  params: {
    'cublasSetFixedPointEmulationMantissaBitCountPointer.mantissaBitCount': raw(
      'an int the library reads at each later emulated call (host or device memory): the caller keeps it alive',
      { retained: true },
    ),
  },
};

const HOST_SCALAR = 'a host integer the solver returns (the mixed-precision and sparse solvers), not device data';
export const cusolver: ModuleOverrides = {
  params: {
    '*.iter': { sem: { role: 'out', elem: i32 }, reason: HOST_SCALAR },
    '*.niters': { sem: { role: 'out', elem: i32 }, reason: HOST_SCALAR },
    '*.singularity': { sem: { role: 'out', elem: i32 }, reason: HOST_SCALAR },
    '*.rankA': { sem: { role: 'out', elem: i32 }, reason: HOST_SCALAR },
    '*.meig': { sem: { role: 'out', elem: i32 }, reason: HOST_SCALAR },
    '*.meig64': {
      sem: { role: 'out', elem: { t: 'int', bits: 64, signed: true } },
      reason: 'the number of eigenvalues found, a host int64_t the 64-bit API returns (as meig)',
    },
    'cusolverDnXgesvdp.h_err_sigma': {
      sem: { role: 'out', elem: { t: 'float', bits: 64 } },
      reason: 'the error bound returned in host memory (double *, h_ for host), not device data',
    },
  },
};

export const nvrtc: ModuleOverrides = {
  params: {
    'nvrtcDestroyProgram.prog': { sem: { role: 'inout', elem: { t: 'handle', name: 'nvrtcProgram' } }, reason: 'the handle to destroy in, zeroed out' },
    'nvrtcGetNumSupportedArchs.numArchs': {
      sem: { role: 'out', elem: { t: 'int', bits: 32, signed: true } },
      reason: 'one count returned (the name reads as a count paired with an array)',
    },
    'nvrtcCreateProgram.includeNames': {
      sem: { role: 'inArray', elem: { t: 'cstring' }, count: 'numHeaders', nullable: true },
      reason: 'one include name per header: numHeaders counts both arrays',
    },
    'nvrtcCreateProgram.numHeaders': { sem: { role: 'count', of: ['headers', 'includeNames'] }, reason: 'the length of headers and includeNames' },
    'nvrtcCreateProgram.name': { sem: { role: 'string', nullable: true }, reason: 'NULL names the program "default_program"' },
  },
};

export const nvjitlink: ModuleOverrides = {
  params: {
    'nvJitLinkDestroy.handle': { sem: { role: 'inout', elem: { t: 'handle', name: 'nvJitLinkHandle' } }, reason: 'the handle to destroy in, zeroed out' },
  },
};

export const nvfatbin: ModuleOverrides = {
  params: {
    'nvFatbinDestroy.handle_indirect': {
      sem: { role: 'inout', elem: { t: 'handle', name: 'nvFatbinHandle' } },
      reason: 'the handle to destroy in, zeroed out',
    },
  },
};
