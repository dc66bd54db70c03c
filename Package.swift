// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "iqscore",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "Psychometrics", targets: ["Psychometrics"]),
        .library(name: "Assembly", targets: ["Assembly"]),
        .library(name: "PsychometricsIO", targets: ["PsychometricsIO"]),
        .executable(name: "iqscore", targets: ["iqscore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-numerics", from: "1.1.1"),
        // `swift package generate-documentation` (the DocC catalogs under Sources/*/*.docc); a build-time plugin only.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // MARK: public libraries
        .target(
            name: "Psychometrics",
            dependencies: ["CLapack"]
        ),

        .target(
            name: "Assembly",
            dependencies: ["Psychometrics"]
        ),

        // Files in and out: the CSV grammar and readers, banks/responses/configurations from files, batch
        // scoring of session files, atomic output sets and their manifests.
        .target(
            name: "PsychometricsIO",
            dependencies: ["Psychometrics", "Assembly"]
        ),

        // MARK: system libraries
        // CBLAS + LAPACKE from OpenBLAS (Debian: apt-get install libopenblas-dev liblapacke-dev).
        .systemLibrary(
            name: "CLapack",
            pkgConfig: "openblas",
            providers: [.apt(["libopenblas-dev", "liblapacke-dev"])]
        ),

        // MARK: executables
        .executableTarget(
            name: "iqscore",
            dependencies: [
                "Psychometrics",
                "Assembly",
                "PsychometricsIO",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),

        // MARK: benchmarks
        .executableTarget(
            name: "scoring-latency",
            dependencies: ["Psychometrics", "PsychometricsIO"],
            path: "Benchmarks/ScoringLatency"
        ),
        .executableTarget(
            name: "blas-reference",
            dependencies: ["Psychometrics"],
            path: "Benchmarks/BLASReference"
        ),
        .executableTarget(
            name: "assembly-latency",
            dependencies: ["Psychometrics", "Assembly"],
            path: "Benchmarks/AssemblyLatency"
        ),
        .executableTarget(
            name: "cat-latency",
            dependencies: ["Psychometrics", "Assembly"],
            path: "Benchmarks/CATLatency"
        ),

        // MARK: tests
        .testTarget(
            name: "PsychometricsTests",
            dependencies: [
                "Psychometrics",
                "PsychometricsIO",
                .product(name: "Numerics", package: "swift-numerics"),
            ]
        ),
        .testTarget(
            name: "AssemblyTests",
            dependencies: [
                "Assembly",
                "PsychometricsIO",
                .product(name: "Numerics", package: "swift-numerics"),
            ]
        ),
        .testTarget(
            name: "iqscoreTests",
            dependencies: ["iqscore"]
        ),
    ]
)
