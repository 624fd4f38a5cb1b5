# Locates the CUPTI, NVTX3 and NVML headers without requiring a CUDA toolkit.
#
# Search order: the nvidia-cuda-cupti / nvidia-nvtx / nvidia-cuda-runtime / nvidia-cuda-crt / nvidia-nvml-dev wheels importable by the Python interpreter
# (cu13 layout "nvidia/cu13/include", older "nvidia/<component>/include"), then CUDA_HOME /
# CUDA_PATH, then /usr/local/cuda. Only headers are used: libcupti and libnvidia-ml are dlopen'ed
# at run time.
#
# Defines NvidiaHeaders::cupti, NvidiaHeaders::nvtx3 and NvidiaHeaders::nvml (INTERFACE targets).

set(_perfprof_header_hints "")
if(Python_EXECUTABLE)
  execute_process(
    COMMAND "${Python_EXECUTABLE}" -c
"import importlib.util, pathlib
spec = importlib.util.find_spec('nvidia')
for root in (spec.submodule_search_locations if spec else []):
    for inc in sorted(pathlib.Path(root).glob('*/include')):
        print(inc)"
    OUTPUT_VARIABLE _perfprof_wheel_includes
    OUTPUT_STRIP_TRAILING_WHITESPACE
    ERROR_QUIET)
  string(REPLACE "\n" ";" _perfprof_wheel_includes "${_perfprof_wheel_includes}")
  list(APPEND _perfprof_header_hints ${_perfprof_wheel_includes})
endif()
foreach(_env CUDA_HOME CUDA_PATH)
  if(DEFINED ENV{${_env}})
    list(APPEND _perfprof_header_hints "$ENV{${_env}}/include" "$ENV{${_env}}/extras/CUPTI/include")
  endif()
endforeach()
list(APPEND _perfprof_header_hints /usr/local/cuda/include /usr/local/cuda/extras/CUPTI/include)

find_path(PERFPROF_CUPTI_INCLUDE_DIR cupti.h HINTS ${_perfprof_header_hints} NO_DEFAULT_PATH)
# cupti.h includes the driver API's cuda.h (nvidia-cuda-runtime wheel, or a toolkit).
find_path(PERFPROF_CUDA_INCLUDE_DIR cuda.h HINTS ${_perfprof_header_hints} NO_DEFAULT_PATH)
find_path(PERFPROF_CUDA_CRT_INCLUDE_DIR crt/host_defines.h HINTS ${_perfprof_header_hints} NO_DEFAULT_PATH)
find_path(PERFPROF_NVTX3_INCLUDE_DIR nvtx3/nvToolsExt.h HINTS ${_perfprof_header_hints} NO_DEFAULT_PATH)
find_path(PERFPROF_NVML_INCLUDE_DIR nvml.h HINTS ${_perfprof_header_hints} NO_DEFAULT_PATH)

# The activity records and profiler params perfprof reads are those of the CUPTI 13.4 headers
# (CUpti_ActivityKernel13, ...). Older 13.x headers lack them, which would fail deep in the
# build; say so here instead. The libcupti loaded at run time may still be any 12.x or 13.x.
set(PERFPROF_MIN_CUPTI_API_VERSION 130401)
set(_perfprof_install_hint "pip install 'nvidia-cuda-cupti>=13.4,<14' nvidia-nvtx nvidia-cuda-runtime nvidia-cuda-crt nvidia-nvml-dev")
set(_perfprof_headers_reason "install the header wheels: ${_perfprof_install_hint}")
set(NvidiaHeaders_VERSION_OK TRUE)
if(PERFPROF_CUPTI_INCLUDE_DIR AND EXISTS "${PERFPROF_CUPTI_INCLUDE_DIR}/cupti_version.h")
  file(STRINGS "${PERFPROF_CUPTI_INCLUDE_DIR}/cupti_version.h" _perfprof_cupti_version_line
       REGEX "^#define CUPTI_API_VERSION [0-9]+")
  string(REGEX REPLACE "^#define CUPTI_API_VERSION ([0-9]+).*" "\\1" PERFPROF_CUPTI_API_VERSION
         "${_perfprof_cupti_version_line}")
  if(PERFPROF_CUPTI_API_VERSION LESS PERFPROF_MIN_CUPTI_API_VERSION)
    set(NvidiaHeaders_VERSION_OK FALSE)
    string(CONCAT _perfprof_headers_reason
           "the CUPTI headers in ${PERFPROF_CUPTI_INCLUDE_DIR} are API version ${PERFPROF_CUPTI_API_VERSION}, older "
           "than the 13.4 (130401) perfprof builds against: ${_perfprof_install_hint}, or set "
           "PERFPROF_CUPTI_INCLUDE_DIR to newer headers (the libcupti loaded at run time may be any 12.x or 13.x)")
  endif()
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(NvidiaHeaders
  REQUIRED_VARS PERFPROF_CUPTI_INCLUDE_DIR PERFPROF_CUDA_INCLUDE_DIR PERFPROF_CUDA_CRT_INCLUDE_DIR
                PERFPROF_NVTX3_INCLUDE_DIR PERFPROF_NVML_INCLUDE_DIR NvidiaHeaders_VERSION_OK
  REASON_FAILURE_MESSAGE "${_perfprof_headers_reason}")

if(NvidiaHeaders_FOUND)
  if(NOT TARGET NvidiaHeaders::cupti)
    add_library(NvidiaHeaders::cupti INTERFACE IMPORTED)
    set_target_properties(NvidiaHeaders::cupti PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES
        "${PERFPROF_CUPTI_INCLUDE_DIR};${PERFPROF_CUDA_INCLUDE_DIR};${PERFPROF_CUDA_CRT_INCLUDE_DIR}")
  endif()
  if(NOT TARGET NvidiaHeaders::nvtx3)
    add_library(NvidiaHeaders::nvtx3 INTERFACE IMPORTED)
    # NVTX3 is header-only; its loader uses dlopen to find an injection library (Nsight).
    set_target_properties(NvidiaHeaders::nvtx3 PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES "${PERFPROF_NVTX3_INCLUDE_DIR}"
      INTERFACE_LINK_LIBRARIES "${CMAKE_DL_LIBS}")
  endif()
  if(NOT TARGET NvidiaHeaders::nvml)
    add_library(NvidiaHeaders::nvml INTERFACE IMPORTED)
    # nvml.h stands alone; libnvidia-ml comes with the driver and is dlopen'ed.
    set_target_properties(NvidiaHeaders::nvml PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES "${PERFPROF_NVML_INCLUDE_DIR}")
  endif()
endif()
