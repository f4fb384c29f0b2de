/// One line of `query --json`.
struct QueryResultLine: Encodable {
    var rank: Int
    var key: String
    var distance: Double
    var columns: [String: String]
}
