// NVML (nvml.h): setters that take non-const records, arrays the names do not reveal, and scalars
// whose plural-looking names would otherwise be left as raw pointers. Each entry says why.
import type { Elem, ModuleOverrides, Override } from '../model';

const u32: Elem = { t: 'int', bits: 32, signed: false };
const u64: Elem = { t: 'int', bits: 64, signed: false };
const record = (name: string, size: number): Elem => ({ t: 'record', name, size });

const CPU_SET = 'a bitmask of cpuSetSize unsigned longs filled by the call (its size is named ...Size, not a count)';
const SETTER = 'a record the call reads (a setter or query key), non-const in the header';
const inRec = (name: string, reason = SETTER): Override => ({ sem: { role: 'inRecord', record: name, nullable: false }, reason });
const outRec = (name: string, reason: string): Override => ({ sem: { role: 'outRecord', record: name }, reason });
const scalarOut = (elem: Elem, reason = 'one value returned; the plural-looking name is not an array'): Override => ({ sem: { role: 'out', elem }, reason });
const filled = (elem: Elem, count: string, reason = 'filled up to the in/out count; with a zero count the call reports how many'): Override => ({
  sem: { role: 'capacityArray', elem, count },
  reason,
});
const capacity = (of: string[], elem: Elem = u32): Override => ({ sem: { role: 'capacity', of, elem }, reason: 'capacity in, count out' });

const params: Record<string, Override> = {
  'nvmlDeviceSetHostname_v1.hostname': inRec('nvmlHostname_v1_t'),
  'nvmlDeviceSetNvLinkDeviceLowPowerThreshold.info': inRec('nvmlNvLinkPowerThres_st'),
  'nvmlDeviceSetNvLinkUtilizationControl.control': inRec('nvmlNvLinkUtilizationControl_st'),
  'nvmlDeviceSetPowerMizerMode_v1.powerMizerMode': inRec('nvmlDevicePowerMizerModes_v1_t'),
  'nvmlDeviceSetVgpuSchedulerState.pSchedulerState': inRec('nvmlVgpuSchedulerSetState_st'),
  'nvmlSetVgpuVersion.vgpuVersion': inRec('nvmlVgpuVersion_st'),
  'nvmlDeviceModifyDrainState.pciInfo': inRec('nvmlPciInfo_st', 'the PCI address of the device to act on'),
  'nvmlDeviceQueryDrainState.pciInfo': inRec('nvmlPciInfo_st', 'the PCI address of the device to query'),
  'nvmlDeviceRemoveGpu.pciInfo': inRec('nvmlPciInfo_st', 'the PCI address of the device to remove'),
  'nvmlGetVgpuCompatibility.vgpuMetadata': inRec('nvmlVgpuMetadata_st', 'metadata the call compares'),
  'nvmlGetVgpuCompatibility.pgpuMetadata': inRec('nvmlVgpuPgpuMetadata_st', 'metadata the call compares'),
  'nvmlGpmMetricsGet.metricsGet': {
    sem: { role: 'inoutRecord', record: 'nvmlGpmMetricsGet_t' },
    reason: 'version, samples and metric ids in, metric values out (the caller sets version: NVML_GPM_METRICS_GET_VERSION)',
  },
  'nvmlGpmQueryDeviceSupport.gpmSupport': {
    sem: { role: 'inoutRecord', record: 'nvmlGpmSupport_t', version: 1 },
    reason: 'versioned (NVML_GPM_SUPPORT_VERSION = 1) although its name has no _vN',
  },
  'nvmlDeviceReadWritePRM_v1.buffer': { sem: { role: 'inoutRecord', record: 'nvmlPRMTLV_v1_t' }, reason: 'request in, response out' },
  'nvmlDeviceGetVgpuMetadata.bufferSize': { sem: { role: 'inout', elem: u32 }, reason: 'the record size in, the size needed out' },
  'nvmlVgpuInstanceGetMetadata.bufferSize': { sem: { role: 'inout', elem: u32 }, reason: 'the record size in, the size needed out' },
  'nvmlDeviceGetFieldValues.values': {
    sem: { role: 'inArray', elem: record('nvmlFieldValue_st', 40), count: 'valuesCount', nullable: false, inout: true },
    reason: 'field ids in, values written back into the same records',
  },
  'nvmlDeviceClearFieldValues.values': {
    sem: { role: 'inArray', elem: record('nvmlFieldValue_st', 40), count: 'valuesCount', nullable: false, inout: true },
    reason: 'field ids in, status written back',
  },
  'nvmlDeviceGetSupportedMemoryClocks.clocksMHz': filled(u32, 'count'),
  'nvmlDeviceGetSupportedMemoryClocks.count': capacity(['clocksMHz']),
  'nvmlDeviceGetSupportedGraphicsClocks.clocksMHz': filled(u32, 'count'),
  'nvmlDeviceGetSupportedGraphicsClocks.count': capacity(['clocksMHz']),
  'nvmlDeviceGetRetiredPages.addresses': filled(u64, 'pageCount'),
  'nvmlDeviceGetRetiredPages.pageCount': capacity(['addresses']),
  'nvmlDeviceGetRetiredPages_v2.addresses': filled(u64, 'pageCount'),
  'nvmlDeviceGetRetiredPages_v2.timestamps': filled(u64, 'pageCount'),
  'nvmlDeviceGetRetiredPages_v2.pageCount': capacity(['addresses', 'timestamps']),
  'nvmlDeviceGetProcessUtilization.utilization': filled(record('nvmlProcessUtilizationSample_st', 24), 'processSamplesCount'),
  'nvmlDeviceGetProcessUtilization.processSamplesCount': capacity(['utilization']),
  'nvmlDeviceGetVgpuProcessUtilization.utilizationSamples': filled(record('nvmlVgpuProcessUtilizationSample_st', 112), 'vgpuProcessSamplesCount'),
  'nvmlDeviceGetVgpuProcessUtilization.vgpuProcessSamplesCount': capacity(['utilizationSamples']),
  'nvmlDeviceGetVgpuUtilization.utilizationSamples': filled(record('nvmlVgpuInstanceUtilizationSample_st', 48), 'vgpuInstanceSamplesCount'),
  'nvmlDeviceGetVgpuUtilization.vgpuInstanceSamplesCount': capacity(['utilizationSamples']),
  'nvmlDeviceGetFBCSessions.sessionInfo': filled(record('nvmlFBCSessionInfo_st', 336), 'sessionCount'),
  'nvmlDeviceGetFBCSessions.sessionCount': capacity(['sessionInfo']),
  'nvmlVgpuInstanceGetFBCSessions.sessionInfo': filled(record('nvmlFBCSessionInfo_st', 336), 'sessionCount'),
  'nvmlVgpuInstanceGetFBCSessions.sessionCount': capacity(['sessionInfo']),
  'nvmlVgpuInstanceGetEncoderSessions.sessionInfo': filled(record('nvmlEncoderSessionInfo_st', 36), 'sessionCount'),
  'nvmlVgpuInstanceGetEncoderSessions.sessionCount': capacity(['sessionInfo']),
  'nvmlDeviceDiscoverGpus.pciInfo': inRec('nvmlPciInfo_st', 'the PCI address to search (its domain, bus and device fields are read)'),
  'nvmlDeviceGetConfComputeGpuAttestationReport.gpuAtstReport': {
    sem: { role: 'inoutRecord', record: 'nvmlConfComputeGpuAttestationReport_st' },
    reason: "the caller's nonce in, the report out (NVIDIA's bindings take the nonce)",
  },
  'nvmlDeviceSetTemperatureThreshold.temp': {
    sem: { role: 'inout', elem: { t: 'int', bits: 32, signed: true } },
    reason: 'the new threshold, read through a non-const int * (a setter)',
  },
  'nvmlDeviceGetGspFirmwareVersion.version': {
    sem: { role: 'outText', length: 64 },
    reason: 'a text buffer of NVML_GSP_FIRMWARE_VERSION_BUF_SIZE (64) bytes; no length parameter',
  },
  'nvmlDeviceGetCpuAffinity.cpuSet': { sem: { role: 'outArray', elem: u64, count: 'cpuSetSize' }, reason: CPU_SET },
  'nvmlDeviceGetCpuAffinityWithinScope.cpuSet': { sem: { role: 'outArray', elem: u64, count: 'cpuSetSize' }, reason: CPU_SET },
  'nvmlDeviceGetMemoryAffinity.nodeSet': {
    sem: { role: 'outArray', elem: u64, count: 'nodeSetSize' },
    reason: 'a bitmask of nodeSetSize unsigned longs filled by the call (its size is named ...Size, not a count)',
  },
  'nvmlDeviceGetNumFans.numFans': scalarOut(u32),
  'nvmlDeviceGetNumGpuCores.numCores': scalarOut(u32),
  'nvmlVgpuTypeGetNumDisplayHeads.numDisplayHeads': scalarOut(u32),
  'nvmlDeviceGetSupportedEventTypes.eventTypes': scalarOut(u64, 'one bitmask returned'),
  'nvmlDeviceGetCurrentClocksEventReasons.clocksEventReasons': scalarOut(u64, 'one bitmask returned'),
  'nvmlDeviceGetCurrentClocksThrottleReasons.clocksThrottleReasons': scalarOut(u64, 'one bitmask returned'),
  'nvmlDeviceGetSupportedClocksEventReasons.supportedClocksEventReasons': scalarOut(u64, 'one bitmask returned'),
  'nvmlDeviceGetSupportedClocksThrottleReasons.supportedClocksThrottleReasons': scalarOut(u64, 'one bitmask returned'),
  'nvmlDeviceGetTotalEccErrors.eccCounts': scalarOut(u64, 'one count returned'),
  'nvmlDeviceGetRemappedRows.corrRows': scalarOut(u32),
  'nvmlDeviceGetRemappedRows.uncRows': scalarOut(u32),
  'nvmlDeviceGetEncoderStats.averageFps': scalarOut(u32),
  'nvmlVgpuInstanceGetEncoderStats.averageFps': scalarOut(u32),
  'nvmlDeviceGetDetailedEccErrors.eccCounts': outRec('nvmlEccErrorCounts_st', 'one record returned; the plural-looking name is not an array'),
  'nvmlDeviceGetAttributes.attributes': outRec('nvmlDeviceAttributes_st', 'one record returned'),
  'nvmlDeviceGetGridLicensableFeatures.pGridLicensableFeatures': outRec('nvmlGridLicensableFeatures_st', 'one record returned'),
  'nvmlDeviceGetRowRemapperHistogram.values': outRec('nvmlRowRemapperHistogramValues_st', 'one record returned'),
  'nvmlUnitGetFanSpeedInfo.fanSpeeds': outRec('nvmlUnitFanSpeeds_st', 'one record returned'),
  'nvmlSystemGetConfComputeCapabilities.capabilities': outRec('nvmlConfComputeSystemCaps_st', 'one record returned'),
  'nvmlDeviceGetVgpuSchedulerCapabilities.pCapabilities': outRec('nvmlVgpuSchedulerCapabilities_st', 'one record returned'),
};

export const nvml: ModuleOverrides = { params };
