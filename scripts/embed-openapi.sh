#!/usr/bin/env bash
# Writes Sources/IQScoreServer/OpenAPIDocument.swift from docs/openapi.json, the committed OpenAPI 3.1 document
# of `iqscore serve` (the server embeds it, so a copied binary needs no resource bundle). OpenAPIDocumentTests
# fails when the two differ.
set -euo pipefail
cd "$(dirname "$0")/.."
src=docs/openapi.json
out=Sources/IQScoreServer/OpenAPIDocument.swift
if grep -q '"""#' "$src"; then echo "embed-openapi: $src contains \"\"\"#, which ends a Swift raw string" >&2; exit 1; fi
{
  cat <<'HEAD'
import NIOCore

// Generated from docs/openapi.json by scripts/embed-openapi.sh; edit that file and run the script.

/// The OpenAPI 3.1 document of the API, served at `GET /openapi.json`: `docs/openapi.json`, embedded so that a
/// copied binary needs no resource bundle. `OpenAPIDocumentTests` checks that the two are the same bytes, that
/// every path in it is routed, and that real responses match its schemas.
public enum OpenAPIDocument {
    public static let json = #"""
HEAD
  cat "$src"
  cat <<'TAIL'
"""#

    static let buffer = ByteBuffer(string: json)
}
TAIL
} > "$out"
echo "wrote $out"
