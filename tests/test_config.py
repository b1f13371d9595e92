"""Configuration discovery, validation and precedence (defaults < file < command line)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ppo_doctor.config import DEFAULTS, find_config_file, load_file, resolve, validate
from ppo_doctor.errors import ConfigError
from ppo_doctor.rules.registry import all_rules


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def a_rule():
    return all_rules()[0]


def test_walks_up_to_the_nearest_config(tmp_path):
    top = write(tmp_path / "ppo-doctor.toml", 'fail_on = "warning"\n')
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    assert find_config_file(deep) == top
    near = write(tmp_path / "a" / "pyproject.toml", '[tool.ppo-doctor]\njobs = 2\n')
    assert find_config_file(deep) == near


def test_pyproject_without_our_table_is_passed_over(tmp_path):
    write(tmp_path / "pyproject.toml", '[project]\nname = "x"\ndependencies = ["ppo-doctor"]\n')
    assert find_config_file(tmp_path) is None


def test_own_file_wins_over_pyproject_in_the_same_folder(tmp_path):
    write(tmp_path / "pyproject.toml", '[tool.ppo-doctor]\nfail_on = "never"\n')
    own = write(tmp_path / "ppo-doctor.toml", 'fail_on = "warning"\n')
    assert find_config_file(tmp_path) == own


def test_load_file_reads_the_tool_table(tmp_path):
    py = write(tmp_path / "pyproject.toml", '[tool.ppo-doctor]\nfail-on = "warning"\n[tool.ruff]\nx = 1\n')
    assert load_file(py) == {"fail-on": "warning"}
    bad = write(tmp_path / "b" / "pyproject.toml", '[tool]\nppo-doctor = 3\n')
    with pytest.raises(ConfigError, match="must be a table"):
        load_file(bad)


def test_invalid_toml_names_the_file(tmp_path):
    write(tmp_path / "ppo-doctor.toml", "fail_on = \n")
    with pytest.raises(ConfigError, match=r"ppo-doctor\.toml: invalid TOML"):
        resolve(start=tmp_path)


def test_validate_accepts_every_documented_key(a_rule):
    param, default = next(iter(a_rule.params.items()))
    raw = {
        "fail-on": "warning",
        "select": ["PD1", a_rule.name],
        "ignore": "PD2",
        "format": "sarif",
        "jobs": 3,
        "aliases": {"custom/kl_to_ref": "kl/ref"},
        "rules": {a_rule.code: {param: default}},
    }
    out = validate(raw)
    assert out == {
        "fail_on": "warning",
        "select": ["PD1", a_rule.name],
        "ignore": ["PD2"],
        "format": "sarif",
        "jobs": 3,
        "aliases": {"custom/kl_to_ref": "kl/ref"},
        "rules": {a_rule.code: {param: default}},
    }


@pytest.mark.parametrize(
    "raw, message",
    [
        ({"fail_on": "sometimes"}, "fail_on: expected one of info, warning, error, never, got 'sometimes'"),
        ({"colour": True}, "unknown key 'colour'"),
        ({"format": "yaml"}, "format: expected one of"),
        ({"jobs": 0}, "jobs: expected an integer >= 1, got 0"),
        ({"jobs": True}, "jobs: expected an integer >= 1, got True"),
        ({"select": [1, 2]}, "select: expected a list of rule codes or names"),
        ({"select": ["ZZ9"]}, "select: 'ZZ9' matches no rule"),
        ({"ignore": ["no-such-rule"]}, "ignore: 'no-such-rule' matches no rule"),
        ({"aliases": {"x": "kl/refs"}}, "aliases.x: 'kl/refs' is not a canonical metric"),
        ({"aliases": ["x"]}, "aliases: expected a table"),
        ({"rules": {"no-such-rule": {"z": 1}}}, "rules.no-such-rule: no rule 'no-such-rule'"),
        ({"rules": {"PD101": 3}}, "rules: expected tables of parameters per rule"),
        ({"fail_on": "error", "fail-on": "warning"}, "'fail-on' given twice"),
    ],
)
def test_validate_rejects_naming_the_problem(raw, message):
    with pytest.raises(ConfigError) as err:
        validate(raw, "my.toml")
    assert str(err.value).startswith("my.toml: ")
    assert message in str(err.value)


def test_rule_parameters_are_checked_by_the_engine(a_rule):
    with pytest.raises(ConfigError, match=rf"rules\.{a_rule.code}\.bogus: unknown parameter"):
        validate({"rules": {a_rule.code: {"bogus": 1}}})


def test_every_problem_is_reported_at_once():
    with pytest.raises(ConfigError) as err:
        validate({"jobs": -1, "format": "x", "what": 1})
    assert str(err.value).count(";") == 2


def test_precedence_defaults_file_cli(tmp_path):
    write(tmp_path / "ppo-doctor.toml", 'fail_on = "warning"\nformat = "json"\njobs = 2\nselect = ["PD1"]\n')
    from_file = resolve(start=tmp_path)
    assert from_file.fail_on == "warning" and from_file.format == "json" and from_file.jobs == 2
    assert list(from_file.ignore) == DEFAULTS["ignore"]  # untouched keys keep their default
    assert from_file.config_file == str(tmp_path / "ppo-doctor.toml")
    cli = resolve({"fail_on": "never", "format": None, "select": None, "jobs": 4}, start=tmp_path)
    assert cli.fail_on == "never" and cli.jobs == 4  # the command line wins
    assert cli.format == "json" and cli.select == ("PD1",)  # None = flag not given


def test_explicit_and_isolated(tmp_path):
    write(tmp_path / "ppo-doctor.toml", 'fail_on = "warning"\n')
    other = write(tmp_path / "ci" / "strict.toml", 'fail_on = "info"\n')
    assert resolve(config_file=other, start=tmp_path).fail_on == "info"
    assert resolve(isolated=True, start=tmp_path).fail_on == "error"
    with pytest.raises(ConfigError, match="config file not found"):
        resolve(config_file=tmp_path / "missing.toml")


def test_defaults_are_not_shared_between_calls(tmp_path):
    first = resolve(isolated=True)
    first.aliases["x"] = "kl/ref"  # a caller scribbling on a table does not reach the next call
    assert resolve(isolated=True).select == () and resolve(isolated=True).aliases == {}
