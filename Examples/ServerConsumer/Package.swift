// swift-tools-version: 6.1
// A consumer of iqscore's libraries as another team's server would be: a separate package, so only `public`
// declarations are visible (the libraries' `package` plumbing is not). `swift test --package-path Examples/ServerConsumer`.
import PackageDescription

let package = Package(
    name: "ServerConsumer",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "iqscore", path: "../..")
    ],
    targets: [
        .testTarget(
            name: "ServerConsumerTests",
            dependencies: [
                .product(name: "Psychometrics", package: "iqscore"),
                .product(name: "Assembly", package: "iqscore"),
                .product(name: "PsychometricsIO", package: "iqscore")
            ]
        )
    ]
)
