"""The format readers of plain logs, one module per format: ``jsonl`` (JSON-lines logs),
``trainer_state`` (HF Trainer's ``trainer_state.json``), ``csv_logs`` (CSV / TSV progress
files), ``sb3_monitor`` (the Monitor wrapper's per-episode ``monitor.csv``), ``mlflow`` (MLflow
run folders), and the readers of what a training printed: ``verl_console`` (veRL's step lines),
``deepspeed_chat_console`` (DeepSpeed-Chat step 3's step and reward lines), ``hf_console`` (the
HF Trainer's log dicts) and ``sb3_console`` (SB3's ``verbose=1`` tables); each with the interface of
:mod:`ppo_doctor.ingest.base` and its entry in :data:`ppo_doctor.ingest.FORMAT_MODULES`; and
``dataframe``, the way in for in-memory tables (:func:`ppo_doctor.analyze` given a DataFrame or
a dict of arrays).

The helpers they share (tabular, filebytes, console, storage ...) are at the
level of :mod:`ppo_doctor.ingest`; the TensorBoard and W&B readers, with the decoders only
they use, are the packages :mod:`ppo_doctor.ingest.tensorboard` and :mod:`ppo_doctor.ingest.wandb`.
"""
