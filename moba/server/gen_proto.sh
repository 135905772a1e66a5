#!/bin/sh
# Regenerates the committed gRPC stubs of moba/server/moba.proto (run from anywhere; needs grpcio-tools, pinned in
# requirements.txt). The repository root is the include path, so the generated code imports
# `from moba.server import moba_pb2` (a package import).
set -e
cd "$(dirname "$0")/../.."
python -m grpc_tools.protoc -I . --python_out=. --pyi_out=. --grpc_python_out=. moba/server/moba.proto
echo "regenerated moba/server/moba_pb2.py, moba_pb2.pyi, moba_pb2_grpc.py"
