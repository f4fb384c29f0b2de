/// The sums every reference distance is made of, accumulated once here in the order and the
/// precision each implementation uses: in Double for the exact distances, in Float, element
/// after element, for the figures libSQL and sqlite-vec report.
///
/// ```swift
/// let exact = BruteForce.doubleSums(q, v)            // exact.l2.squareRoot() is the exact l2
/// let (dot, qq, vv) = BruteForce.floatDotAndNorms(q, v)
/// ```
extension BruteForce {
    /// The dot product, both squared norms, the squared l2 and the l1 of `a` and `b`, each
    /// element widened to Double and summed in element order.
    static func doubleSums(_ a: [Float], _ b: [Float]) -> (dot: Double, aa: Double, bb: Double, l2: Double, l1: Double)
    {
        var sums = (dot: 0.0, aa: 0.0, bb: 0.0, l2: 0.0, l1: 0.0)
        for i in a.indices {
            let x = Double(a[i])
            let y = Double(b[i])
            sums.dot += x * y
            sums.aa += x * x
            sums.bb += y * y
            sums.l2 += (x - y) * (x - y)
            sums.l1 += abs(x - y)
        }
        return sums
    }

    /// The dot product and both squared norms of `a` and `b` as Float sums, each product
    /// rounded to Float before it is added, element after element.
    static func floatDotAndNorms(_ a: [Float], _ b: [Float]) -> (dot: Float, aa: Float, bb: Float) {
        var dot: Float = 0
        var aa: Float = 0
        var bb: Float = 0
        for i in a.indices {
            let pd = a[i] * b[i]
            let pa = a[i] * a[i]
            let pb = b[i] * b[i]
            dot += pd
            aa += pa
            bb += pb
        }
        return (dot, aa, bb)
    }

    /// The Euclidean distance as sqlite-vec computes it: a Float sum of squared differences,
    /// element after element, its square root rounded to Float.
    static func floatL2(_ a: [Float], _ b: [Float]) -> Double {
        var sum: Float = 0
        for i in a.indices {
            let d = a[i] - b[i]
            let p = d * d
            sum += p
        }
        return Double(Float(Double(sum).squareRoot()))
    }
}
