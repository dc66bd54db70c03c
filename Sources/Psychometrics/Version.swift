/// The version of iqscore (the libraries and the command): `iqscore --version` prints it and every run manifest
/// records it (`iqscore_version`), so a bank or a score file can be traced to the code that wrote it.
/// Semantic versioning; the minor number counts the capabilities (issues) delivered.
public let iqscoreVersion = "0.11.0"
