// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "iqscore",
    // macOS 14: Hummingbird 2 (IQScoreServer) needs it; Linux has no such floor.
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "Psychometrics", targets: ["Psychometrics"]),
        .library(name: "Assembly", targets: ["Assembly"]),
        .library(name: "Norming", targets: ["Norming"]),
        .library(name: "Integrity", targets: ["Integrity"]),
        .library(name: "PsychometricsIO", targets: ["PsychometricsIO"]),
        .library(name: "IQScoreServer", targets: ["IQScoreServer"]),
        .executable(name: "iqscore", targets: ["iqscore"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-numerics", from: "1.1.1"),
        // `swift package generate-documentation` (the DocC catalogs under Sources/*/*.docc); a build-time plugin only.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        // `iqscore serve` (the IQScoreServer library): HTTP, logging, metrics, graceful shutdown. Hummingbird's
        // swift-configuration support is left out (its "ConfigurationSupport" trait): the server reads flags.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: ["FullFoundation"]),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        // The HTTP/1 pipeline `iqscore serve` builds around its connection guard (Hummingbird's own, re-assembled).
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2")
    ],
    targets: [
        // MARK: public libraries
        .target(
            name: "Psychometrics",
            dependencies: ["InputSupport", "CLapack", "CKernels"]
        ),

        // Input plumbing below every library, not a product: the strict JSON parser (files and request bodies),
        // the schema check of JSON inputs, located input errors, how bytes become text in messages, decimal
        // numbers, the byte-keyed id table, the bank header's layouts. Psychometrics re-exports its three public
        // types (InputError, InputErrors, BankLayout); the rest is `package`.
        .target(name: "InputSupport"),

        // The calibrator's innermost loops in C, built for SSE2, AVX2 and AVX-512 with the CPU's best chosen
        // at load time (Swift builds for the x86-64 baseline only). Plumbing of Psychometrics, not a product.
        .target(name: "CKernels"),

        .target(
            name: "Assembly",
            dependencies: ["Psychometrics", "InputSupport"]
        ),

        // Norm-referenced IQ: raking a norm sample to population margins, the sinh–arcsinh distribution,
        // continuous (age-polynomial) and age-banded norms, the area transformation, the NORMS.json document.
        .target(
            name: "Norming",
            dependencies: ["Psychometrics", "InputSupport"]
        ),

        // Files in and out: the CSV grammar and readers, banks/responses/configurations/norms from files, batch
        // scoring of session files, atomic output sets and their manifests.
        // Differential item and test functioning across groups (Mantel–Haenszel, logistic regression, IRT
        // likelihood-ratio and Wald tests through the multiple-group calibration, DTF). Not a product: a DIF
        // study is a batch job whose interface is `iqscore dif`; its types are package access.
        .target(
            name: "Fairness",
            dependencies: ["Psychometrics", "InputSupport"]
        ),
        // Unproctored testing: rapid guesses and response-time effort, person fit of times, item preknowledge,
        // and item monitoring over time (CUSUM) for leaked items.
        .target(
            name: "Integrity",
            dependencies: ["Psychometrics", "InputSupport"]
        ),
        .target(
            name: "PsychometricsIO",
            dependencies: ["Psychometrics", "InputSupport", "Assembly", "Norming", "Integrity"]
        ),

        // HTTP/JSON serving of the libraries (`iqscore serve`): routes a team can mount in its own Hummingbird
        // application, or the whole application with reload, metrics and graceful shutdown.
        .target(
            name: "IQScoreServer",
            dependencies: [
                "Psychometrics",
                "InputSupport",
                "Assembly",
                "Norming",
                "PsychometricsIO",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types")
            ],
            // The OpenAPI document, compiled in as bytes (`PackageResources.openapi_json`): one source, no bundle.
            resources: [.embedInCode("openapi.json")]
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
                "InputSupport",
                "Assembly",
                "Norming",
                "Fairness",
                "Integrity",
                "PsychometricsIO",
                "IQScoreServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log")
            ]
        ),

        // MARK: benchmarks
        .executableTarget(
            name: "scoring-latency",
            dependencies: ["Psychometrics", "PsychometricsIO", "Integrity"],
            path: "Benchmarks/ScoringLatency"
        ),
        .executableTarget(
            name: "serve-latency",
            dependencies: ["Psychometrics", "PsychometricsIO", "IQScoreServer", .product(name: "NIOCore", package: "swift-nio")],
            path: "Benchmarks/ServeLatency"
        ),
        .executableTarget(
            name: "blas-reference",
            dependencies: ["Psychometrics", "CKernels"],
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
        .executableTarget(
            name: "graded-calibration",
            dependencies: ["Psychometrics"],
            path: "Benchmarks/GradedCalibration"
        ),
        .executableTarget(
            name: "dif-study",
            dependencies: ["Psychometrics", "Fairness"],
            path: "Benchmarks/DIFStudy"
        ),
        .executableTarget(
            name: "integrity-study",
            dependencies: ["Psychometrics", "Integrity"],
            path: "Benchmarks/IntegrityStudy"
        ),
        .executableTarget(
            name: "norms-recovery",
            dependencies: ["Psychometrics", "Norming"],
            path: "Benchmarks/NormsRecovery"
        ),

        // MARK: tests
        // What several test targets share: the built `iqscore` and how it is run, a seeded generator, temporary
        // folders, the package's own files. Not a product.
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(
            name: "PsychometricsTests",
            dependencies: [
                "Psychometrics",
                "PsychometricsIO",
                "TestSupport",
                .product(name: "Numerics", package: "swift-numerics")
            ],
            // Reference values read by path (mirt's scores on Data/ files), not bundled.
            exclude: ["Fixtures"]
        ),
        // Files in and out: the CSV grammar, banks and responses from files, JSON inputs, batch scoring.
        .testTarget(
            name: "PsychometricsIOTests",
            dependencies: ["PsychometricsIO", "Psychometrics", "InputSupport", "Integrity", "TestSupport"]
        ),
        .testTarget(
            name: "IntegrityTests",
            dependencies: ["Integrity", "Psychometrics", "PsychometricsIO"]
        ),
        .testTarget(
            name: "FairnessTests",
            dependencies: ["Fairness", "Psychometrics"],
            exclude: ["Fixtures"]
        ),
        .testTarget(
            name: "AssemblyTests",
            dependencies: [
                "Assembly",
                "PsychometricsIO",
                .product(name: "Numerics", package: "swift-numerics")
            ]
        ),
        .testTarget(
            name: "NormingTests",
            dependencies: [
                "Norming",
                "Psychometrics",
                "PsychometricsIO",
                .product(name: "Numerics", package: "swift-numerics")
            ]
        ),
        .testTarget(
            name: "IQScoreServerTests",
            dependencies: [
                "IQScoreServer",
                "iqscore",
                "Psychometrics",
                "InputSupport",
                "Assembly",
                "PsychometricsIO",
                "TestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log")
            ]
        ),
        .testTarget(
            name: "iqscoreTests",
            dependencies: ["iqscore", "TestSupport"]
        )
    ]
)
