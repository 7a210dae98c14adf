"""Schemathesis hooks for scripts/schemathesis (SCHEMATHESIS_HOOKS).

The snapshot upload (`PUT /api/agent/v1/snapshots/{id}/data`) takes `application/zstd`, a media
type Schemathesis has no serializer for: without one it stops that operation with "Serialization
not possible", an error that fails the run. The body is bytes sent as they are, as for
application/octet-stream.
"""
import schemathesis

schemathesis.serializer.alias("application/zstd", "application/octet-stream")
