import ArgumentParser
import VecSync

/// The options `verify` and `rebuild` share: a database file, and the one index to work on
/// (every index when it is not given).
struct IndexSelection: ParsableArguments {
    @Option(name: .long, help: "The database file.")
    var db: String

    @Option(name: .long, help: "Only this index.")
    var index: String?

    /// Whether the index named `name` is one to work on.
    func includes(_ name: String) -> Bool {
        index == nil || index == name
    }

    /// The error when no index was found to work on.
    var nothingFound: ValidationErrorText {
        ValidationErrorText(index.map { "no index named \($0)" } ?? "no vector or text index in \(db)")
    }
}
