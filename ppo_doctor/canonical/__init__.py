"""Canonicalising: what the readers' raw tags, configs and folder names mean.

One package for every piece of knowledge that turns a :class:`~ppo_doctor.frame.RawRun` into a
canonical :class:`~ppo_doctor.run.Run`:

* :mod:`.metrics`: the metric vocabulary and alias tables, tag mapping, the run's plan, and
  :func:`.metrics.build_run` (the stage's entry point);
* :mod:`.frameworks`: framework ids, markers, guessing, domains and evaluation prefixes;
* :mod:`.hparams`: canonical hyper-parameter names and one reader per kind of value;
* :mod:`.name_tokens`: what a tag in no alias table means, from the words of its name;
* :mod:`.design`: what a run lacks by design (no critic, KL off) and the KL coefficient in force.

Nothing here judges a run; the rules and the diagnosis read it through :mod:`ppo_doctor.view`.
"""
