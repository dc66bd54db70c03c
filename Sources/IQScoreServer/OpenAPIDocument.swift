import NIOCore

/// The OpenAPI 3.1 document of the API, served at `GET /openapi.json`.
///
/// Its one source is `Sources/IQScoreServer/openapi.json` (`docs/openapi.json` links to it), compiled into the
/// library by SwiftPM (`resources: [.embedInCode("openapi.json")]`), so a copied binary needs no resource bundle
/// and there is no second copy to keep in step. `OpenAPIDocumentTests` checks that every path in it is routed and
/// that real responses match its schemas; CI runs schemathesis against it.
public enum OpenAPIDocument {
    /// The document's text, as committed.
    public static let json = String(decoding: PackageResources.openapi_json, as: UTF8.self)

    static let buffer = ByteBuffer(bytes: PackageResources.openapi_json)
}
