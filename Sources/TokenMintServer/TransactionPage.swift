import TokenMintCore

/// The transactions query as the WhitelabelPay SDK sends it: `page` from 1,
/// `size` (default 20, at most 100), and `sort=property(,asc|desc)`,
/// repeatable, the first the most significant (default `createdAt,desc`).
struct TransactionPage: Sendable, Equatable {
    /// The properties a page sorts by.
    enum Property: String, Sendable, CaseIterable {
        case createdAt, amount, currency, transactionId, paymentMeansId

        var column: String {
            switch self {
            case .createdAt: "created_at"
            case .amount: "amount"
            case .currency: "currency"
            case .transactionId: "id"
            case .paymentMeansId: "means_id"
            }
        }
    }

    /// One sort key.
    struct Order: Sendable, Equatable {
        let property: Property
        let ascending: Bool
        var description: String { "\(property.rawValue),\(ascending ? "asc" : "desc")" }
    }

    static let maximumSize = 100
    static let maximumPage = 1_000_000

    var page = 1
    var size = 20
    var sort = [Order(property: .createdAt, ascending: false)]

    /// Parses the query's values; each error names the parameter.
    init(page: String?, size: String?, sort: [String]) throws(TokenMintError) {
        if let page {
            guard let value = Self.number(page), (1...Self.maximumPage).contains(value) else {
                throw TokenMintError(.server.badRequest, "page is a number from 1 to \(Self.maximumPage)")
            }
            self.page = value
        }
        if let size {
            guard let value = Self.number(size), (1...Self.maximumSize).contains(value) else {
                throw TokenMintError(.server.badRequest, "size is a number from 1 to \(Self.maximumSize)")
            }
            self.size = value
        }
        guard sort.count <= Property.allCases.count else { throw TokenMintError(.server.badRequest, "at most \(Property.allCases.count) sort keys") }
        if !sort.isEmpty {
            var orders: [Order] = []
            for key in sort {
                let parts = key.split(separator: ",", omittingEmptySubsequences: false)
                guard (1...2).contains(parts.count), let property = Property(rawValue: String(parts[0])) else {
                    throw TokenMintError(.server.badRequest, "sort is property(,asc|desc) with property one of "
                        + Property.allCases.map(\.rawValue).joined(separator: ", ") + ", not \"\(key.prefix(64))\"")
                }
                let direction = parts.count == 2 ? parts[1].lowercased() : "asc"
                guard direction == "asc" || direction == "desc" else { throw TokenMintError(.server.badRequest, "a sort direction is asc or desc") }
                guard !orders.contains(where: { $0.property == property }) else {
                    throw TokenMintError(.server.badRequest, "sort names \(property.rawValue) twice")
                }
                orders.append(Order(property: property, ascending: direction == "asc"))
            }
            self.sort = orders
        }
    }

    /// A decimal number of at most 7 digits, no sign.
    static func number(_ text: String) -> Int? {
        guard (1...7).contains(text.utf8.count), text.utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
        return Int(text)
    }
}
