// The input plumbing lives in the `InputSupport` target (not a product). Its public types are part of this
// library's API: `InputError` and `InputErrors` (problems located in a file, which every reader of the libraries
// throws) and `BankLayout` (`ItemBank.layout`: how a bank file's header was read). Re-exported so that
// `import Psychometrics` names them; everything else there is `package`.
@_exported import InputSupport
