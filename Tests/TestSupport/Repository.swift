import Foundation

/// The package's own files (Data/, README.md, docs/, fixtures under Tests/) for tests that read them in place.
package enum Repository {
    /// The package root (…/Tests/TestSupport/Repository.swift → …).
    package static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A file or folder by its path from the package root (`"Data/icar16.csv"`).
    package static func file(_ relativePath: String) -> URL { root.appendingPathComponent(relativePath) }
}
