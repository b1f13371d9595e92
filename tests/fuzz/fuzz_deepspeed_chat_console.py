"""Fuzz target: the DeepSpeed-Chat step-3 console reader (``python tests/fuzz/fuzz_deepspeed_chat_console.py -atheris_runs=10000``)."""

import harness
import hostile_inputs as h

if __name__ == "__main__":
    older = (
        b"epoch: 0|step: 0|ppo_ep: 1|act_loss: 0.25|cri_loss: 0.125|unsuper_loss: 0.0\naverage reward score: -0.5\n"
        b"2024-01-01 12:00:00 - INFO - epoch: 1, step: 0, ppo_ep: 1, act_loss: tensor(0.03, device='cuda:0'),cri_loss: nan, pretrain_loss: 0.0\n"
        b"Average reward score: 1.5 Average return: 0.5 Average length: 120 Average kl: 0.01 KL ratio: 0.2\n"
    )
    harness.fuzz("deepspeed_chat_console", "training.log", [h.deepspeed_chat_console(12).data, older])
