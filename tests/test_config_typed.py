"""The typed settings (:class:`ppo_doctor.config.Config`): frozen, built once by ``resolve`` or
``Config.coerce``, with values coerced to their types and every bad value named with its key and
where it came from; precedence defaults < file < command line; a rule's name entry beats its code
entry whatever their order."""

from __future__ import annotations

import dataclasses
import pickle
from pathlib import Path

import pytest

import ppo_doctor
from ppo_doctor.config import Config, coerce, coerce_param, resolve, resolve_with_sources
from ppo_doctor.errors import ConfigError
from ppo_doctor.rules import registry
from ppo_doctor.rules.engine import _overrides_for

SAMPLE_LOGS = Path(__file__).resolve().parent.parent / "sample_logs"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_config_is_frozen_and_typed():
    cfg = coerce({"select": ["PD1"], "per_run_ignores": {"legacy-*": ["PD9"]}, "jobs": 2})
    assert cfg.select == ("PD1",) and cfg.per_run_ignores == {"legacy-*": ("PD9",)} and cfg.jobs == 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.jobs = 3  # type: ignore[misc]
    assert coerce(cfg) is cfg  # coerced once: a Config passes through untouched
    assert pickle.loads(pickle.dumps(cfg)) == cfg  # it travels to worker processes


def test_precedence_defaults_then_file_then_command_line(tmp_path):
    write(tmp_path / "ppo-doctor.toml", 'fail_on = "warning"\njobs = 2\nformat = "json"\n')
    cfg, sources = resolve_with_sources({"jobs": 3, "format": None}, start=tmp_path)
    assert (cfg.fail_on, cfg.jobs, cfg.format, cfg.executor) == ("warning", 3, "json", None)
    file = str(tmp_path / "ppo-doctor.toml")
    assert sources["fail_on"] == file and sources["jobs"] == "command line" and sources["executor"] == "default"
    assert resolve(isolated=True, start=tmp_path) == Config()


@pytest.mark.parametrize(
    "table",
    [
        '[rules.reward-spike]\nz = 5\n[rules.PD201]\nz = 9\n',  # the code's entry written last
        '[rules.PD201]\nz = 9\n[rules.reward-spike]\nz = 5\n',
    ],
)
def test_a_rules_name_entry_beats_its_code_entry_in_either_order(tmp_path, table):
    write(tmp_path / "ppo-doctor.toml", table)
    rule = registry.get("PD201")
    assert _overrides_for(rule, resolve(start=tmp_path).rules) == {"z": 5.0}
    assert _overrides_for(rule, coerce({"rules": {"reward-spike": {"z": 5}, "PD201": {"z": 9}}}).rules) == {"z": 5.0}


def test_values_are_coerced_once():
    cfg = coerce({"fail-on": "Warning", "jobs": "4", "format": " JSON ", "dask": " tcp://h:8786 ", "select": "PD1"})
    assert (cfg.fail_on, cfg.jobs, cfg.format, cfg.dask, cfg.select) == ("warning", 4, "json", "tcp://h:8786", ("PD1",))
    spike = coerce({"rules": {"PD201": {"z": 10, "min_points": "30", "direction": "down"}}}).rules["PD201"]
    assert spike == {"z": 10.0, "min_points": 30, "direction": "down"}
    assert type(spike["z"]) is float and type(spike["min_points"]) is int


@pytest.mark.parametrize(
    ("default", "value", "expected"),
    [(1.5, 2, 2.0), (1.5, "2.5", 2.5), (3, "7", 7), (3, " -2 ", -2), (True, "false", False), (False, "Yes", True), (None, [1], [1])],
)
def test_coerce_param(default, value, expected):
    assert coerce_param(default, value) == expected and type(coerce_param(default, value)) is type(expected)


@pytest.mark.parametrize(("default", "value"), [(3, True), (3, "7.5"), (1.5, True), (1.5, "nan"), (True, 1), (True, "maybe"), ("up", 3)])
def test_coerce_param_refuses(default, value):
    with pytest.raises(TypeError, match="expected"):
        coerce_param(default, value)


def test_bad_values_name_the_key_and_the_source(tmp_path):
    write(tmp_path / "ppo-doctor.toml", 'jobs = "many"\n[rules.PD201]\nmin_points = "lots"\n')
    with pytest.raises(ConfigError) as err:
        resolve(start=tmp_path)
    message = str(err.value)
    assert message.startswith(f"{tmp_path / 'ppo-doctor.toml'}: ")
    assert "jobs: expected an integer >= 1, got 'many'" in message
    assert "rules.PD201.min_points: expected int, got str 'lots'" in message
    with pytest.raises(ConfigError, match=r"^command line: fail_on: expected one of info, warning, error, never, got 'loud'"):
        resolve({"fail_on": "loud"}, isolated=True)
    with pytest.raises(ConfigError, match=r"^configuration: jobs: expected an integer >= 1, got True"):
        coerce({"jobs": True})


def test_analyze_takes_a_mapping_or_a_config_alike():
    as_dict = ppo_doctor.analyze(SAMPLE_LOGS, {"select": ["PD1", "PD2"]}).to_dict()
    as_config = ppo_doctor.analyze(SAMPLE_LOGS, Config(select=("PD1", "PD2"))).to_dict()
    assert as_dict == as_config
    codes = {f["code"] for r in as_dict["runs"] for f in r["findings"]}
    assert codes and all(c.startswith(("PD1", "PD2")) for c in codes)
    with pytest.raises(ConfigError, match="unknown key 'selct'"):
        ppo_doctor.analyze(SAMPLE_LOGS, {"selct": ["PD1"]})
