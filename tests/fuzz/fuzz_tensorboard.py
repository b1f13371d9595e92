"""Fuzz target: the TensorBoard event-file reader (``python tests/fuzz/fuzz_tensorboard.py -atheris_runs=10000``)."""

import struct

import harness
import hostile_inputs as h

if __name__ == "__main__":
    big = h.tfrecord(h.pb_double(1, 1.7e9) + h.pb_varint(2, 7) + h.pb_bytes(5, h.pb_bytes(1, h.pb_bytes(1, "x") + h.pb_float(2, 1.0)) * 3))
    huge = struct.pack("<Q", 1 << 60)
    harness.fuzz(
        "tensorboard",
        "events.out.tfevents.1700000000.host",
        [h.tensorboard(12).data, h.tensorboard(3, values=[float("nan"), float("inf"), 1e39]).data, h.tensorboard(2).data + big,
         h.tensorboard(2).data + huge + struct.pack("<I", h.masked_crc32c(huge))],
    )
