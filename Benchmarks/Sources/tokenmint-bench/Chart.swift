import Foundation

/// The ratios as a horizontal bar chart: per operation, TokenMint ÷ raw C call
/// and TokenMint ÷ peer, a line at 1× and a tick at the goal.
enum Chart {
    static func svg(_ results: [Measurement], title: String) -> String {
        let rows = results.filter { $0.implementation == .tokenmint && ($0.ratioToRaw != nil || $0.ratioToPeer != nil) }
        let labelWidth = 290.0, plotWidth = 560.0, barHeight = 9.0, rowHeight = 26.0, top = 58.0
        let largest = rows.flatMap { [$0.ratioToRaw ?? 0, $0.ratioToPeer ?? 0] }.max() ?? 1
        let scaleMax = max(2, (largest * 2).rounded(.up) / 2)
        let x = { (ratio: Double) in labelWidth + plotWidth * min(ratio, scaleMax) / scaleMax }
        let height = top + Double(rows.count) * rowHeight + 30
        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(labelWidth + plotWidth + 70))" height="\(Int(height))" \
            font-family="sans-serif" font-size="11">
            <rect width="100%" height="100%" fill="white"/>
            <text x="10" y="18" font-size="13" font-weight="bold">\(escape(title))</text>
            <rect x="10" y="30" width="10" height="9" fill="#2b6cb0"/><text x="24" y="38">× raw C call</text>
            <rect x="110" y="30" width="10" height="9" fill="#dd6b20"/><text x="124" y="38">× Swift peer (swift-crypto, jwt-kit)</text>
            <text x="\(Int(labelWidth + plotWidth - 160))" y="38">| goal (to raw)</text>

            """
        var tick = 0.0
        while tick <= scaleMax + 1e-9 {
            let px = x(tick)
            svg += "<line x1=\"\(px)\" y1=\"\(top - 8)\" x2=\"\(px)\" y2=\"\(height - 26)\" stroke=\"\(tick == 1 ? "#333" : "#ddd")\"/>"
            svg += "<text x=\"\(px)\" y=\"\(height - 12)\" text-anchor=\"middle\">\(String(format: "%g", tick))×</text>\n"
            tick += scaleMax > 4 ? 1 : 0.5
        }
        for (index, row) in rows.enumerated() {
            let y = top + Double(index) * rowHeight
            svg += "<text x=\"\(labelWidth - 8)\" y=\"\(y + barHeight + 2)\" text-anchor=\"end\">\(escape(row.group))</text>\n"
            for (offset, ratio, colour) in [(0.0, row.ratioToRaw, "#2b6cb0"), (barHeight + 1, row.ratioToPeer, "#dd6b20")] {
                guard let ratio else { continue }
                svg += "<rect x=\"\(labelWidth)\" y=\"\(y + offset)\" width=\"\(x(ratio) - labelWidth)\" height=\"\(barHeight)\" fill=\"\(colour)\"/>"
                svg += "<text x=\"\(x(ratio) + 3)\" y=\"\(y + offset + barHeight - 1)\" font-size=\"9\">\(String(format: "%.2f", ratio))</text>\n"
            }
            if let goal = row.goal, row.ratioToRaw != nil {
                svg += "<line x1=\"\(x(goal))\" y1=\"\(y - 2)\" x2=\"\(x(goal))\" y2=\"\(y + barHeight + 1)\" stroke=\"black\" stroke-width=\"2\"/>\n"
            }
        }
        return svg + "</svg>\n"
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }
}
