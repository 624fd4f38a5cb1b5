/* Control API of libperfprof_fake_nvml, the test double of libnvidia-ml (NVML).
 *
 * Tests drive the double through these functions (resolve them with dlsym, or load the library
 * with Python ctypes) next to the NVML entry points it implements: nvmlInit_v2, nvmlShutdown,
 * nvmlErrorString, nvmlDeviceGetCount_v2, nvmlDeviceGetHandleByIndex_v2,
 * nvmlDeviceGetUtilizationRates, nvmlDeviceGetMemoryInfo, nvmlDeviceGetPowerUsage,
 * nvmlDeviceGetClockInfo (NVML_CLOCK_SM), nvmlDeviceGetTemperature (NVML_TEMPERATURE_GPU),
 * nvmlDeviceGetPcieThroughput, nvmlDeviceGetNvLinkState and nvmlDeviceGetFieldValues (the
 * NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX/_TX and NVML_FI_DEV_PCIE_COUNT_RX/TX_BYTES counters). Every function is thread safe: a test may
 * change values while a sampler thread reads them.
 *
 * As NVML does, the double counts initialisations: nvmlInit_v2 adds one, nvmlShutdown takes one
 * away, and every other call but nvmlErrorString answers NVML_ERROR_UNINITIALIZED at zero.
 * Devices are numbered from 0; a `device` or `link` out of range makes a control call do nothing. */
#ifndef PERFPROF_FAKE_NVML_CONTROL_H
#define PERFPROF_FAKE_NVML_CONTROL_H

#if defined(__GNUC__)
#define FAKE_NVML_API __attribute__((visibility("default")))
#else
#define FAKE_NVML_API
#endif

/* The most devices the double holds. */
#define FAKE_NVML_MAX_DEVICES 64

#ifdef __cplusplus
extern "C" {
#endif

/* Back to the state of a freshly loaded library: one device, every value 0, no NVLink, no
 * injected failures. The initialisation count is left alone (it is the client's). */
FAKE_NVML_API void fake_nvml_reset(void);

/* The number of GPUs nvmlDeviceGetCount_v2 reports (0 to FAKE_NVML_MAX_DEVICES; default 1).
 * Devices keep their values when the count shrinks and grows again. */
FAKE_NVML_API void fake_nvml_set_device_count(unsigned int count);

/* What the device's queries answer: utilisation in % (gpu, memory), device memory used in bytes
 * (of 80 GiB, or of `memory_used` when more), power in mW, the SM clock in MHz, the GPU
 * temperature in degrees C, and PCIe receive/transmit throughput in KB/s. */
FAKE_NVML_API void fake_nvml_set_device(unsigned int device, unsigned int utilization_gpu,
                                        unsigned int utilization_memory,
                                        unsigned long long memory_used_bytes,
                                        unsigned int power_mw, unsigned int sm_clock_mhz,
                                        unsigned int temperature_c, unsigned int pcie_rx_kb_per_s,
                                        unsigned int pcie_tx_kb_per_s);

/* Marks NVLink `link` (below NVML_NVLINK_MAX_LINKS) of the device active (active != 0) or not.
 * A device none of whose links has been marked either way has no NVLink: its
 * nvmlDeviceGetNvLinkState answers NVML_ERROR_NOT_SUPPORTED, and so do its throughput fields. */
FAKE_NVML_API void fake_nvml_set_link_active(unsigned int device, unsigned int link, int active);

/* Adds to the link's cumulative throughput counters (KiB received and transmitted), which the
 * NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX/_TX fields report (scopeId: the link; UINT_MAX: the sum
 * over the device's links). */
FAKE_NVML_API void fake_nvml_add_link_traffic(unsigned int device, unsigned int link,
                                              unsigned long long rx_kib,
                                              unsigned long long tx_kib);

/* Every device query takes this long before answering (0: none, the default), as a slow driver
 * does: nvmlDeviceGetPcieThroughput waits out NVML's 20 ms window. */
FAKE_NVML_API void fake_nvml_set_query_delay_us(unsigned int microseconds);

/* Adds to the device's cumulative PCIe byte counters (NVML_FI_DEV_PCIE_COUNT_RX_BYTES / _TX_BYTES).
 * A device to which no PCIe traffic was added has no such counters: the fields answer
 * NVML_ERROR_NOT_SUPPORTED, as on GPUs before Hopper, and only nvmlDeviceGetPcieThroughput answers. */
FAKE_NVML_API void fake_nvml_add_pcie_traffic(unsigned int device, unsigned long long rx_bytes,
                                              unsigned long long tx_bytes);

/* From now on the NVML entry point named `function_name` (e.g. "nvmlDeviceGetPowerUsage")
 * returns `result` (an nvmlReturn_t, such as NVML_ERROR_NOT_SUPPORTED = 3 or
 * NVML_ERROR_UNKNOWN = 999) without doing anything; "<name>:<device>" (e.g.
 * "nvmlDeviceGetPowerUsage:1") makes it fail for that device only. "nvmlInit_v2" makes NVML fail
 * to initialise (e.g. NVML_ERROR_DRIVER_NOT_LOADED = 9). result 0 removes the failure. */
FAKE_NVML_API void fake_nvml_fail(const char* function_name, int result);

/* Successful nvmlInit_v2 calls not yet matched by nvmlShutdown. */
FAKE_NVML_API int fake_nvml_init_count(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PERFPROF_FAKE_NVML_CONTROL_H */
