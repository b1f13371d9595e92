"""``ppo_doctor.analyze(data)``: pandas wide form (as wandb's run.history()), long form (as
tbparse's reader.scalars), a dict of arrays; anything else is a clear error."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import ppo_doctor
from benchmarks.gen_sweep import curves
from ppo_doctor.errors import PPODoctorError

N = 120


@pytest.fixture(scope="module")
def blowup() -> dict[str, np.ndarray]:
    return curves(0.02, 1, N, 6, blowup_below=0.1)


def _key(report):
    rr = report.runs[0]
    return rr.verdict, rr.symptoms, [(f.code, f.start_step) for f in rr.findings], rr.run.config


def test_wide_long_and_dict_give_one_report(blowup):
    wide = pd.DataFrame({"_step": np.arange(N), "_runtime": np.arange(N) * 2.0, "_timestamp": 1.7e9 + np.arange(N), **blowup})
    long = pd.DataFrame(
        [{"step": s, "tag": tag, "value": float(v[s]), "wall_time": 1.7e9 + s} for tag, v in blowup.items() for s in range(N)]
    )
    reports = [ppo_doctor.analyze(d, hparams={"kl_coef": 0.02}) for d in (wide, long, {"step": np.arange(N), **blowup})]
    assert _key(reports[0])[0] == "unhealthy" and "kl_blowup" in _key(reports[0])[1]
    assert _key(reports[0])[3] == {"kl_coef": 0.02}
    assert _key(reports[1]) == _key(reports[0]) == _key(reports[2])
    assert reports[0].runs[0].run.framework == "trl" and "_runtime" not in reports[0].runs[0].run.frame.metrics


def test_wide_nan_cells_are_gaps_and_long_keeps_logged_nan():
    wide = pd.DataFrame({"step": [0, 1, 2, 3], "a": [1.0, np.nan, 3.0, np.nan], "b": [np.nan, 2.0, np.nan, 4.0]})
    run = ppo_doctor.analyze(wide).runs[0].run
    assert run.frame.series("a").index.tolist() == [0, 2] and run.frame.series("b").index.tolist() == [1, 3]
    long = pd.DataFrame({"step": [0, 1], "tag": ["a", "a"], "value": [1.0, np.nan]})
    assert np.isnan(ppo_doctor.analyze(long).runs[0].run.frame.series("a").iloc[1])


@pytest.mark.parametrize(
    "data, message",
    [
        (42, "cannot analyse a int: expected a path or URL, a pandas DataFrame in wide form"),
        (pd.DataFrame({"step": [0, 1], "name": ["x", "y"]}), "no numeric metric column"),
        ({"kl": [1.0, 2.0], "step": [0]}, "'kl' has 2 values but 'step' has 1 steps"),
        ({"kl": "text"}, "not a 1-D array of numbers"),
        (pd.DataFrame({"step": [0.5, 1.0], "kl": [1.0, 2.0]}), "steps must be whole numbers"),
    ],
)
def test_anything_else_is_a_clear_error(data, message):
    with pytest.raises(PPODoctorError, match=None) as exc:
        ppo_doctor.analyze(data)
    assert message in str(exc.value)
