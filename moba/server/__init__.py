"""The gRPC game server and the remote environment (see moba/server/README.md).

- ``moba.proto``: the protocol (package openfive.v1); ``moba_pb2*.py`` are its committed stubs (``gen_proto.sh``).
- ``game_server``: ``GameServer`` / ``MobaGameServicer``, one process hosting many games.
- ``python -m app.server --port 50051 [--max-games N] [--host 127.0.0.1]``: the CLI (app/server.py).
- ``remote_env``: ``RemoteMobaEnv`` (the MultiAgentEnv client) and ``make_moba_env(config)`` (local or remote).

Nothing is imported here, so that ``import moba.server`` stays cheap.
"""
