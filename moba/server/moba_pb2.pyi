from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Tensor(_message.Message):
    __slots__ = ("name", "dtype", "shape", "data")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DTYPE_FIELD_NUMBER: _ClassVar[int]
    SHAPE_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    name: str
    dtype: str
    shape: _containers.RepeatedScalarFieldContainer[int]
    data: bytes
    def __init__(self, name: _Optional[str] = ..., dtype: _Optional[str] = ..., shape: _Optional[_Iterable[int]] = ..., data: _Optional[bytes] = ...) -> None: ...

class Observations(_message.Message):
    __slots__ = ("agent_ids", "tensors")
    AGENT_IDS_FIELD_NUMBER: _ClassVar[int]
    TENSORS_FIELD_NUMBER: _ClassVar[int]
    agent_ids: _containers.RepeatedScalarFieldContainer[str]
    tensors: _containers.RepeatedCompositeFieldContainer[Tensor]
    def __init__(self, agent_ids: _Optional[_Iterable[str]] = ..., tensors: _Optional[_Iterable[_Union[Tensor, _Mapping]]] = ...) -> None: ...

class Action(_message.Message):
    __slots__ = ("primary", "delay", "target_unit", "offset_x", "offset_y")
    PRIMARY_FIELD_NUMBER: _ClassVar[int]
    DELAY_FIELD_NUMBER: _ClassVar[int]
    TARGET_UNIT_FIELD_NUMBER: _ClassVar[int]
    OFFSET_X_FIELD_NUMBER: _ClassVar[int]
    OFFSET_Y_FIELD_NUMBER: _ClassVar[int]
    primary: int
    delay: int
    target_unit: int
    offset_x: int
    offset_y: int
    def __init__(self, primary: _Optional[int] = ..., delay: _Optional[int] = ..., target_unit: _Optional[int] = ..., offset_x: _Optional[int] = ..., offset_y: _Optional[int] = ...) -> None: ...

class AgentInfo(_message.Message):
    __slots__ = ("reward_signals", "game_time_s", "winner", "extra_json")
    class RewardSignalsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    REWARD_SIGNALS_FIELD_NUMBER: _ClassVar[int]
    GAME_TIME_S_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    EXTRA_JSON_FIELD_NUMBER: _ClassVar[int]
    reward_signals: _containers.ScalarMap[str, float]
    game_time_s: float
    winner: str
    extra_json: str
    def __init__(self, reward_signals: _Optional[_Mapping[str, float]] = ..., game_time_s: _Optional[float] = ..., winner: _Optional[str] = ..., extra_json: _Optional[str] = ...) -> None: ...

class GameSpec(_message.Message):
    __slots__ = ("game_id", "mode", "agent_ids", "team_size", "max_units", "config_json", "reward_signals", "action_keys")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    AGENT_IDS_FIELD_NUMBER: _ClassVar[int]
    TEAM_SIZE_FIELD_NUMBER: _ClassVar[int]
    MAX_UNITS_FIELD_NUMBER: _ClassVar[int]
    CONFIG_JSON_FIELD_NUMBER: _ClassVar[int]
    REWARD_SIGNALS_FIELD_NUMBER: _ClassVar[int]
    ACTION_KEYS_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    mode: str
    agent_ids: _containers.RepeatedScalarFieldContainer[str]
    team_size: int
    max_units: int
    config_json: str
    reward_signals: _containers.RepeatedScalarFieldContainer[str]
    action_keys: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, game_id: _Optional[str] = ..., mode: _Optional[str] = ..., agent_ids: _Optional[_Iterable[str]] = ..., team_size: _Optional[int] = ..., max_units: _Optional[int] = ..., config_json: _Optional[str] = ..., reward_signals: _Optional[_Iterable[str]] = ..., action_keys: _Optional[_Iterable[str]] = ...) -> None: ...

class HealthRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class HealthReply(_message.Message):
    __slots__ = ("status", "games", "max_games", "uptime_s", "pid", "version")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    MAX_GAMES_FIELD_NUMBER: _ClassVar[int]
    UPTIME_S_FIELD_NUMBER: _ClassVar[int]
    PID_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    status: str
    games: int
    max_games: int
    uptime_s: float
    pid: int
    version: str
    def __init__(self, status: _Optional[str] = ..., games: _Optional[int] = ..., max_games: _Optional[int] = ..., uptime_s: _Optional[float] = ..., pid: _Optional[int] = ..., version: _Optional[str] = ...) -> None: ...

class CreateGameRequest(_message.Message):
    __slots__ = ("mode", "seed", "config_json", "worker_index", "instance_id", "client")
    MODE_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    CONFIG_JSON_FIELD_NUMBER: _ClassVar[int]
    WORKER_INDEX_FIELD_NUMBER: _ClassVar[int]
    INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    CLIENT_FIELD_NUMBER: _ClassVar[int]
    mode: str
    seed: int
    config_json: str
    worker_index: int
    instance_id: int
    client: str
    def __init__(self, mode: _Optional[str] = ..., seed: _Optional[int] = ..., config_json: _Optional[str] = ..., worker_index: _Optional[int] = ..., instance_id: _Optional[int] = ..., client: _Optional[str] = ...) -> None: ...

class CreateGameReply(_message.Message):
    __slots__ = ("spec",)
    SPEC_FIELD_NUMBER: _ClassVar[int]
    spec: GameSpec
    def __init__(self, spec: _Optional[_Union[GameSpec, _Mapping]] = ...) -> None: ...

class GetSpecRequest(_message.Message):
    __slots__ = ("game_id",)
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    def __init__(self, game_id: _Optional[str] = ...) -> None: ...

class ResetRequest(_message.Message):
    __slots__ = ("game_id", "seed")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    seed: int
    def __init__(self, game_id: _Optional[str] = ..., seed: _Optional[int] = ...) -> None: ...

class ResetReply(_message.Message):
    __slots__ = ("observations", "infos")
    class InfosEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: AgentInfo
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[AgentInfo, _Mapping]] = ...) -> None: ...
    OBSERVATIONS_FIELD_NUMBER: _ClassVar[int]
    INFOS_FIELD_NUMBER: _ClassVar[int]
    observations: Observations
    infos: _containers.MessageMap[str, AgentInfo]
    def __init__(self, observations: _Optional[_Union[Observations, _Mapping]] = ..., infos: _Optional[_Mapping[str, AgentInfo]] = ...) -> None: ...

class StepRequest(_message.Message):
    __slots__ = ("game_id", "actions")
    class ActionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: Action
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[Action, _Mapping]] = ...) -> None: ...
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    actions: _containers.MessageMap[str, Action]
    def __init__(self, game_id: _Optional[str] = ..., actions: _Optional[_Mapping[str, Action]] = ...) -> None: ...

class StepReply(_message.Message):
    __slots__ = ("observations", "rewards", "terminateds", "truncateds", "infos")
    class RewardsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    class TerminatedsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: bool
        def __init__(self, key: _Optional[str] = ..., value: _Optional[bool] = ...) -> None: ...
    class TruncatedsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: bool
        def __init__(self, key: _Optional[str] = ..., value: _Optional[bool] = ...) -> None: ...
    class InfosEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: AgentInfo
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[AgentInfo, _Mapping]] = ...) -> None: ...
    OBSERVATIONS_FIELD_NUMBER: _ClassVar[int]
    REWARDS_FIELD_NUMBER: _ClassVar[int]
    TERMINATEDS_FIELD_NUMBER: _ClassVar[int]
    TRUNCATEDS_FIELD_NUMBER: _ClassVar[int]
    INFOS_FIELD_NUMBER: _ClassVar[int]
    observations: Observations
    rewards: _containers.ScalarMap[str, float]
    terminateds: _containers.ScalarMap[str, bool]
    truncateds: _containers.ScalarMap[str, bool]
    infos: _containers.MessageMap[str, AgentInfo]
    def __init__(self, observations: _Optional[_Union[Observations, _Mapping]] = ..., rewards: _Optional[_Mapping[str, float]] = ..., terminateds: _Optional[_Mapping[str, bool]] = ..., truncateds: _Optional[_Mapping[str, bool]] = ..., infos: _Optional[_Mapping[str, AgentInfo]] = ...) -> None: ...

class CloseGameRequest(_message.Message):
    __slots__ = ("game_id",)
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    def __init__(self, game_id: _Optional[str] = ...) -> None: ...

class CloseGameReply(_message.Message):
    __slots__ = ("closed",)
    CLOSED_FIELD_NUMBER: _ClassVar[int]
    closed: bool
    def __init__(self, closed: _Optional[bool] = ...) -> None: ...

class ListGamesRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GameStatus(_message.Message):
    __slots__ = ("game_id", "mode", "seed", "steps", "episodes", "done", "created_unix", "last_used_unix", "client")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    EPISODES_FIELD_NUMBER: _ClassVar[int]
    DONE_FIELD_NUMBER: _ClassVar[int]
    CREATED_UNIX_FIELD_NUMBER: _ClassVar[int]
    LAST_USED_UNIX_FIELD_NUMBER: _ClassVar[int]
    CLIENT_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    mode: str
    seed: int
    steps: int
    episodes: int
    done: bool
    created_unix: float
    last_used_unix: float
    client: str
    def __init__(self, game_id: _Optional[str] = ..., mode: _Optional[str] = ..., seed: _Optional[int] = ..., steps: _Optional[int] = ..., episodes: _Optional[int] = ..., done: _Optional[bool] = ..., created_unix: _Optional[float] = ..., last_used_unix: _Optional[float] = ..., client: _Optional[str] = ...) -> None: ...

class ListGamesReply(_message.Message):
    __slots__ = ("games", "max_games")
    GAMES_FIELD_NUMBER: _ClassVar[int]
    MAX_GAMES_FIELD_NUMBER: _ClassVar[int]
    games: _containers.RepeatedCompositeFieldContainer[GameStatus]
    max_games: int
    def __init__(self, games: _Optional[_Iterable[_Union[GameStatus, _Mapping]]] = ..., max_games: _Optional[int] = ...) -> None: ...
