"""The TensorBoard wing: event files read without TensorFlow or a protobuf runtime.

* :mod:`.reader` - the reader (format ``tensorboard``): reads ``events.out.tfevents.*``;
* :mod:`.sniff` - recognises an event file without the decoders (the reader re-exports it);
* :mod:`.tfrecord` - TFRecord framing: length, masked CRC-32C, the bulk framer of the fast path;
* :mod:`.protowire` - the protobuf wire format (varints, fields) the decoders are built on;
* :mod:`.events` - ``Event`` / ``Summary`` decoding of one record;
* :mod:`.fastpath` - the bulk decoder of scalar records of equal length, numpy-vectorised;
* :mod:`.collect` - gathers the decoded points, texts and hparams into a run;
* :mod:`.text` - config and samples from text and hparams summaries.

:mod:`ppo_doctor.ingest.follow` reuses the framing and decoders to read a growing file.
"""
