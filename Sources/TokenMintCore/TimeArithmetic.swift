/// Time arithmetic that never traps: token times are attacker-chosen
/// `Int64`s, so sums saturate at the ends of the range instead of wrapping
/// or overflowing.
public enum TimeArithmetic {
    /// `a + b`, clamped to `Int64.min ... Int64.max`.
    @inlinable
    public static func adding(_ a: Int64, _ b: Int64) -> Int64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        guard overflow else { return sum }
        return b > 0 ? .max : .min
    }

    /// `a - b`, clamped to `Int64.min ... Int64.max`.
    @inlinable
    public static func subtracting(_ a: Int64, _ b: Int64) -> Int64 {
        let (difference, overflow) = a.subtractingReportingOverflow(b)
        guard overflow else { return difference }
        return b < 0 ? .max : .min
    }
}
