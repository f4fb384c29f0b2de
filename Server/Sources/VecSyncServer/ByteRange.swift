import Foundation

/// One byte range of a `Range: bytes=…` header (RFC 9110 §14.1.2): `a-b`, `a-` or `-n`.
/// Several ranges are not served.
enum ByteRange {
    /// The half-open range the header asks of a body of `size` bytes; nil when it is not
    /// one satisfiable range.
    static func parse(_ header: String, size: Int) -> Range<Int>? {
        let text = header.trimmingCharacters(in: .whitespaces)
        guard text.hasPrefix("bytes="), size > 0 else { return nil }
        let spec = text.dropFirst("bytes=".count)
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return nil }
        let first = spec[..<dash].trimmingCharacters(in: .whitespaces)
        let last = spec[spec.index(after: dash)...].trimmingCharacters(in: .whitespaces)
        if first.isEmpty {
            guard let suffix = Int(last), suffix > 0 else { return nil }
            return max(0, size - suffix)..<size
        }
        guard let start = Int(first), start >= 0, start < size else { return nil }
        if last.isEmpty { return start..<size }
        guard let end = Int(last), end >= start else { return nil }
        return start..<(min(end, size - 1) + 1)
    }
}
