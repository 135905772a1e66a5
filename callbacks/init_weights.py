"""``init.checkpoint``: "main" starts from a module checkpoint's weights (a kickstart from ``python -m app.pretrain``,
or a run's checkpoint) instead of random ones, its observation statistics included. Applied when the algorithm is
built; a restored checkpoint (``--resume``) overwrites it afterwards, as it should."""
from __future__ import annotations

import numpy as np
from ray.rllib.callbacks.callbacks import RLlibCallback
from ray.rllib.utils.annotations import override

from policies.five_learner import INIT_KEY
from policies.module_ids import MAIN


def check_same_layout(path: str, state: dict, expected: dict) -> None:
    """Raises a ValueError naming init.checkpoint unless `state` has the parameters and shapes of `expected`."""
    missing, extra = sorted(set(expected) - set(state)), sorted(set(state) - set(expected))
    shapes = [k for k in expected if k in state and np.shape(state[k]) != np.shape(expected[k])]
    if missing or extra or shapes:
        raise ValueError(f"init.checkpoint {path!r}: its module does not fit this run's model (missing {missing[:3]}, "
                         f"unexpected {extra[:3]}, other shapes {shapes[:3]}): set the run's model keys and mode to "
                         f"those it was trained with")


class InitWeightsCallback(RLlibCallback):
    @override(RLlibCallback)
    def on_algorithm_init(self, *, algorithm, **kwargs):
        path = (algorithm.config.learner_config_dict.get(INIT_KEY) or {}).get("checkpoint")
        if not path:
            return
        from policies.references import load_module
        state = load_module(path).get_state()
        expected = algorithm.learner_group.get_weights(module_ids=[MAIN])[MAIN]
        check_same_layout(path, state, expected)
        algorithm.learner_group.foreach_learner(lambda learner: learner.module[MAIN].set_state(state))
        # set on every runner and waited for (RLlib's sync_weights does not wait, and may skip a busy runner)
        algorithm.env_runner_group.foreach_env_runner(
            lambda er: er.module[MAIN].set_state(state) if er.module is not None else None, local_env_runner=True)
