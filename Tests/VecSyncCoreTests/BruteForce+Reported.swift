import Foundation

/// The reference for vec0 answers that must be exact row for row: the key a KNN answer is
/// ordered by and the figure its `distance` column reports, for every element type.
///
/// float32 columns are ordered by the exact distance, in Double, as the extension defines it
/// (cosine = 1 − dot/√(qq·vv), clamped to 0…2), and report sqlite-vec's figure: float32
/// sums in element order for l2 and cosine, the exact l1 rounded to float32, the exact dot.
/// int8 and bit columns are ordered by, and report, sqlite-vec's figure. A bound on distance
/// applies to the reported figure; a row with no figure (NaN) comes last.
///
/// ```swift
/// let (key, figure) = BruteForce.vec0Distances(metric: "l2", element: .float32, query: q, row: v)
/// ```
extension BruteForce {
    /// The element type of a vec0 vector column.
    enum Element: String, Sendable {
        case float32 = "float"
        case int8
        case bit
    }

    /// The ordering key and reported figure of `row` against `query`. int8 values are
    /// whole numbers; bit vectors hold 0 or 1 an element.
    static func vec0Distances(metric: String, element: Element, query: [Float], row: [Float]) -> (
        key: Double, figure: Double
    ) {
        switch element {
        case .float32:
            let exact = exactDistance(metric: metric, query, row)
            return (exact, floatFigure(metric: metric, query, row, exact: exact))
        case .int8:
            let figure = int8Figure(metric: metric, query, row)
            return (figure, figure)
        case .bit:
            let differing = zip(query, row).filter { $0 != $1 }.count
            return (Double(differing), Double(differing))
        }
    }

    /// The exact distance of two float32 vectors, in Double, summed in element order.
    static func exactDistance(metric: String, _ q: [Float], _ v: [Float]) -> Double {
        let sums = doubleSums(q, v)
        switch metric {
        case "cosine": return min(2, max(0, 1 - sums.dot / (sums.aa * sums.bb).squareRoot()))
        case "dot": return -sums.dot
        case "l1": return sums.l1
        default: return sums.l2.squareRoot()
        }
    }

    /// sqlite-vec's figure for two float32 vectors.
    static func floatFigure(metric: String, _ q: [Float], _ v: [Float], exact: Double) -> Double {
        switch metric {
        case "cosine": return cosineFigure(q, v)
        case "l1": return Double(Float(exact))
        case "dot": return exact
        default: return floatL2(q, v)
        }
    }

    /// sqlite-vec's figure for two int8 vectors (whole numbers as floats).
    static func int8Figure(metric: String, _ q: [Float], _ v: [Float]) -> Double {
        switch metric {
        case "cosine": return cosineFigure(q, v)
        case "l1": return zip(q, v).reduce(0.0) { $0 + Double(abs($1.0 - $1.1)) }
        default: return floatL2(q, v)
        }
    }

    /// 1 − cos in float32 sums, as sqlite-vec computes it; NaN when either is all zeros.
    static func cosineFigure(_ q: [Float], _ v: [Float]) -> Double {
        let (dot, qq, vv) = floatDotAndNorms(q, v)
        if qq == 0 || vv == 0 { return .nan }
        return Double(Float(1 - Double(dot) / (Double(qq).squareRoot() * Double(vv).squareRoot())))
    }

    /// The rowids a vec0 KNN query returns: rows whose figure `accepts`, ordered by key,
    /// ties by ascending rowid (rows with no figure last), the first `k`.
    static func vec0Answer(_ rows: [(rowid: Int64, key: Double, figure: Double)], k: Int, accepts: (Double) -> Bool)
        -> [Int64]
    {
        rows.filter { $0.figure.isNaN ? false : accepts($0.figure) }
            .sorted { a, b in a.key != b.key ? a.key < b.key : a.rowid < b.rowid }
            .prefix(k).map(\.rowid)
    }
}
