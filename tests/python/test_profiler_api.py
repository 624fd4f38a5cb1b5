import gc
import logging
import subprocess
import sys
import weakref

import pytest

import perfprof
from perfprof import ExperimentalConfig, ExportType, GpuMetrics, ProfilerLevel, _core, torch_capture
from trace_checks import names


def test_kineto_profile_start_stop(export):
    prof = perfprof._KinetoProfile(activities=[perfprof.ProfilerActivity.CPU])
    with perfprof.record_function("before"):
        pass
    prof.start()
    with perfprof.record_function("during"):
        pass
    prof.stop()
    with perfprof.record_function("after"):
        pass
    assert names(export(prof)) == ["during"]


def test_a_profile_goes_with_its_last_reference():
    """What a stopped profile keeps (the trace; torch's results, which are large) is freed when the
    user drops it, not at some later run of the cyclic collector."""
    gc.disable()
    try:
        prof = perfprof.profile(schedule=perfprof.schedule(wait=0, warmup=1, active=1), on_trace_ready=lambda p: None)
        with prof:
            for _ in range(3):
                with perfprof.record_function("work"):
                    pass
                prof.step()
        dropped = weakref.ref(prof)
        del prof
        assert dropped() is None
    finally:
        gc.enable()


def test_only_one_profiler_collects_at_a_time():
    with perfprof.profile():
        with pytest.raises(RuntimeError, match="another profiler"):
            perfprof.profile().start()
    with perfprof.profile():  # the first one released the recorder
        pass


def test_activities():
    expected = [perfprof.ProfilerActivity.CPU]
    if perfprof.cuda_status()["available"]:
        expected.append(perfprof.ProfilerActivity.CUDA)
    assert perfprof.supported_activities() == expected
    import torch.profiler

    prof = perfprof.profile(activities=[torch.profiler.ProfilerActivity.CPU, "cpu"])
    assert prof.activities == [perfprof.ProfilerActivity.CPU]
    with pytest.raises(ValueError, match="unknown activity"):
        perfprof.profile(activities=["TPU"])
    with pytest.raises(TypeError, match="activities"):
        perfprof.profile(activities="CPU")


@pytest.mark.parametrize("flag", ["record_shapes", "profile_memory", "with_stack", "with_flops", "with_modules"])
def test_profile_flags_must_be_bool(flag):
    with pytest.raises(TypeError, match=flag):
        perfprof.profile(**{flag: 1})


def test_profile_argument_types():
    with pytest.raises(TypeError, match="schedule"):
        perfprof.profile(schedule=3)
    with pytest.raises(TypeError, match="on_trace_ready"):
        perfprof.profile(on_trace_ready="handler")
    with pytest.raises(TypeError, match="experimental_config"):
        perfprof.profile(experimental_config={"mstx": True})


@pytest.mark.parametrize("field", ["wait", "active", "warmup", "repeat", "skip_first", "skip_first_wait"])
def test_schedule_counts_beyond_the_step_counter_name_the_field(field):
    values = {"wait": 0, "active": 1, field: 2 ** 70}
    with pytest.raises(ValueError, match=f"schedule: '{field}' must be from [01] to 2\\*\\*62 - 1, got {2 ** 70}"):
        perfprof.schedule(**values)


def called_while_profiling() -> int:
    return len("work")


def test_an_option_set_before_start_takes_effect_and_is_checked(export):
    prof = perfprof.profile(activities=[perfprof.ProfilerActivity.CPU])
    prof.with_stack = True
    with prof:
        called_while_profiling()
    functions = [e["name"] for e in export(prof)["traceEvents"] if e.get("cat") == "python_function"]
    assert [name for name in functions if name.endswith(": called_while_profiling")], functions
    with pytest.raises(TypeError, match="with_stack"):
        prof.with_stack = "yes"
    assert prof.with_stack is True


def test_a_data_source_failing_to_start_is_logged_and_the_rest_is_collected(export, monkeypatch, caplog):
    def unavailable(threshold_ns):
        raise RuntimeError("GC monitor unavailable")

    monkeypatch.setattr(_core, "gc_set_threshold_ns", unavailable)
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU],
                          experimental_config=ExperimentalConfig(gc_detect_threshold=0)) as prof:
        with perfprof.record_function("work"):
            gc.collect()
    assert names(export(prof)) == ["work"]
    assert caplog.text.count("GC monitor unavailable") == 1
    with perfprof.profile():  # the recorder was released
        pass


def test_a_data_source_failing_at_stop_is_logged_and_the_rest_is_collected(export, monkeypatch, caplog):
    stop_thread = torch_capture.stop_thread

    def stop_then_fail(*args):
        stop_thread(*args)
        raise RuntimeError("torch results unreadable")

    monkeypatch.setattr(torch_capture, "stop_thread", stop_then_fail)
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU]) as prof:
        with perfprof.record_function("work"):
            pass
    assert names(export(prof)) == ["work"]
    assert caplog.text.count("torch results unreadable") == 1
    with perfprof.profile():  # the recorder was released
        pass


def test_capturing_in_a_child_thread_does_not_load_cupti():
    """Only a profiler asking for ProfilerActivity.CUDA loads libcupti and initialises the driver."""
    script = ("import torch, perfprof\n"
              "perfprof.profile.enable_profiler_in_child_thread(record_shapes=True)\n"
              "perfprof.profile.disable_profiler_in_child_thread()\n"
              "print(perfprof._core.cupti_status()['tried'])\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    assert result.stdout.strip() == "[]"


def test_uncollected_options_are_logged_once(caplog):
    caplog.set_level(logging.WARNING, logger="perfprof")
    config = ExperimentalConfig(op_attr=True, host_sys=["cpu", "osrt"])
    for _ in range(2):
        with perfprof.profile(experimental_config=config):
            pass
    text = caplog.text
    for option in ("op_attr", "host_sys=osrt"):
        assert text.count(option) == 1, option


def test_gpu_metrics_without_cuda_activity_say_so_once(caplog):
    caplog.set_level(logging.WARNING, logger="perfprof")
    config = ExperimentalConfig(gpu_metrics="Memory")
    for _ in range(2):
        with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], experimental_config=config):
            pass
    assert caplog.text.count("gpu_metrics and l2_cache need ProfilerActivity.CUDA") == 1


class TestExperimentalConfig:
    def test_defaults(self):
        config = ExperimentalConfig()
        assert config.export_type == [ExportType.Text]
        assert config.profiler_level is ProfilerLevel.Level0
        assert config.mstx is False and config.msprof_tx is False
        assert config.gpu_metrics is GpuMetrics.GpuMetricsNone
        assert config.data_simplification is True and config.gc_detect_threshold is None
        assert config.uncollected_options() == []

    def test_gpu_metrics_are_asked_for_explicitly_at_every_level(self):
        # Not PipeUtilization at Level1/2 as the spec's aic_metrics: measuring serialises kernels.
        for level in ProfilerLevel:
            assert ExperimentalConfig(profiler_level=level).gpu_metrics is GpuMetrics.GpuMetricsNone

    def test_strings_are_accepted_for_enums(self):
        config = ExperimentalConfig(export_type=["text", "DB"], profiler_level="Level1", gpu_metrics="Memory")
        assert config.export_type == [ExportType.Text, ExportType.Db]
        assert config.gpu_metrics is GpuMetrics.Memory

    @pytest.mark.parametrize("field, value, error", [
        ("export_type", ["csv"], ValueError),
        ("export_type", [], ValueError),
        ("export_type", 3, TypeError),
        ("profiler_level", "Level9", ValueError),
        ("profiler_level", 1, TypeError),
        ("mstx", "yes", TypeError),
        ("mstx_domain_include", "default", TypeError),
        ("mstx_domain_exclude", [1], TypeError),
        ("gpu_metrics", "Bogus", ValueError),
        ("l2_cache", 1, TypeError),
        ("op_attr", None, TypeError),
        ("data_simplification", "false", TypeError),
        ("record_op_args", 0, TypeError),
        ("gc_detect_threshold", -1, ValueError),
        ("gc_detect_threshold", "1ms", TypeError),
        ("gc_detect_threshold", True, TypeError),
        ("gc_detect_threshold", float("inf"), ValueError),
        ("gc_detect_threshold", 1e300, ValueError),
        ("gc_detect_threshold", float("nan"), ValueError),
        ("host_sys", ["gpu"], ValueError),
        ("host_sys", "cpu", TypeError),
        ("sys_io", 1, TypeError),
        ("sys_interconnection", "on", TypeError),
        ("capture_buffer_mb", 0, ValueError),
        ("capture_buffer_mb", 1.5, TypeError),
        ("capture_buffer_mb", 2**80, ValueError),
        ("record_limit_mb", 0, ValueError),
        ("record_limit_mb", 2**80, ValueError),  # once accepted, then a raw TypeError in the first step()
        ("record_limit_mb", 2**30 + 1, ValueError),
        ("record_limit_mb", "1024", TypeError),
        ("gpu_telemetry", 1, TypeError),
        ("sample_interval_ms", "20", TypeError),
        ("sample_interval_ms", True, TypeError),
        ("sample_interval_ms", 0.5, ValueError),
        ("sample_interval_ms", 60_001, ValueError),
        ("sample_interval_ms", float("inf"), ValueError),
        ("sample_interval_ms", float("nan"), ValueError),
    ])
    def test_bad_values_name_the_field(self, field, value, error):
        with pytest.raises(error, match=field):
            ExperimentalConfig(**{field: value})

    @pytest.mark.parametrize("field, value, error", [
        ("profiler_level", "junk", ValueError),
        ("export_type", ["csv"], ValueError),
        ("gc_detect_threshold", float("inf"), ValueError),
        ("data_simplification", "false", TypeError),
    ])
    def test_a_field_assigned_later_is_checked_as_the_constructor_checks_it(self, field, value, error):
        config = ExperimentalConfig()
        with pytest.raises(error, match=field):
            setattr(config, field, value)
        assert config == ExperimentalConfig()  # unchanged
        config.profiler_level = "Level1"  # a good value is taken in the field's own type
        assert config.profiler_level is ProfilerLevel.Level1

    def test_mstx_alias(self):
        assert ExperimentalConfig(msprof_tx=True).mstx is True
        with pytest.raises(ValueError, match="msprof_tx"):
            ExperimentalConfig(mstx=True, msprof_tx=False)

    def test_include_wins_over_exclude(self, caplog):
        config = ExperimentalConfig(mstx=True, mstx_domain_include=["a"], mstx_domain_exclude=["b"])
        assert config.mstx_domain_include == ["a"] and config.mstx_domain_exclude == []

    def test_every_argument_is_a_field_of_to_dict(self):
        import inspect

        arguments = set(inspect.signature(ExperimentalConfig.__init__).parameters) - {"self", "msprof_tx"}
        assert arguments == set(ExperimentalConfig.FIELDS) == set(ExperimentalConfig().to_dict())

    def test_round_trip_and_equality(self):
        config = ExperimentalConfig(mstx=True, profiler_level="Level1", gc_detect_threshold=1, host_sys=["CPU"])
        as_dict = config.to_dict()
        assert as_dict["host_sys"] == ["cpu"] and as_dict["gc_detect_threshold"] == 1.0
        assert ExperimentalConfig(**as_dict) == config
        assert "profiler_level='Level1'" in repr(config)

    def test_supported_queries(self):
        assert perfprof.supported_export_type() == [ExportType.Text, ExportType.Db]
        assert perfprof.supported_profiler_level() == list(ProfilerLevel)
        groups = perfprof.supported_gpu_metrics()
        assert groups[0] is GpuMetrics.GpuMetricsNone
        if not perfprof.cuda_status()["available"]:  # what the chip measures: tests/python/test_gpu_kernel_metrics.py
            assert groups == [GpuMetrics.GpuMetricsNone]
        with pytest.raises(ValueError, match="device"):
            perfprof.supported_gpu_metrics(-1)
        with pytest.raises(TypeError, match="device"):
            perfprof.supported_gpu_metrics("0")


def test_spec_alias_names():
    assert perfprof._ExperimentalConfig is ExperimentalConfig


def test_a_forked_child_stops_recording_and_frees_what_it_inherited(export):
    import os

    from perfprof import _core

    with perfprof.profile() as prof:
        with perfprof.record_function("parent"):
            pid = os.fork()
            if pid == 0:  # the child: nothing recorded, nothing left from the parent
                with perfprof.record_function("child"):
                    pass
                ok = _core.channels() == 0 and _core.collect(0, _core.now_ns()).num_ranges == 0
                os._exit(0 if ok else 1)
            _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert names(export(prof)) == ["parent"]
