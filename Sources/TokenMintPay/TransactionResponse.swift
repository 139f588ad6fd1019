public import TokenMintCore

/// A payment the backend accepted, as `fetchTransactions` lists it.
public struct PaymentTransaction: Sendable, Hashable {
    /// The transaction ID.
    public var id: String
    /// The payment means charged.
    public var paymentMeansID: String
    /// The amount in minor units.
    public var amount: Int64
    /// The ISO 4217 currency.
    public var currency: String
    /// `accepted`.
    public var status: String
    /// When it was accepted, seconds since the epoch.
    public var createdAt: Int64

    /// A transaction.
    public init(id: String, paymentMeansID: String, amount: Int64, currency: String, status: String, createdAt: Int64) {
        self.id = id
        self.paymentMeansID = paymentMeansID
        self.amount = amount
        self.currency = currency
        self.status = status
        self.createdAt = createdAt
    }
}

/// The transactions query as the seed describes it: `page` from 1, `size`
/// 1 to 100 (default 20), `sort=property(,asc|desc)` repeatable, the first
/// key the most significant (default `createdAt,desc`). The device's
/// `fetchTransactions(page:size:sort:)` and the server read it the same way.
public struct TransactionQuery: Sendable, Hashable {
    /// The properties a page sorts by.
    public enum Property: String, Sendable, CaseIterable {
        /// When the payment was accepted.
        case createdAt
        /// The amount.
        case amount
        /// The currency.
        case currency
        /// The transaction ID.
        case transactionId
        /// The payment means.
        case paymentMeansId
    }

    /// One sort key.
    public struct Order: Sendable, Hashable, CustomStringConvertible {
        /// The property.
        public let property: Property
        /// Ascending (else descending).
        public let ascending: Bool
        /// `property,asc` or `property,desc`.
        public var description: String { "\(property.rawValue),\(ascending ? "asc" : "desc")" }
    }

    /// The largest page number.
    public static let maximumPage = 1_000_000
    /// The largest page size.
    public static let maximumSize = 100

    /// The page, from 1.
    public let page: Int
    /// Transactions per page.
    public let size: Int
    /// The sort keys in effect.
    public let orders: [Order]
    /// The sort keys as text, `property,asc|desc`.
    public var sort: [String] { orders.map(\.description) }

    /// A query; each value is checked.
    /// - Throws: `pay.invalidConfiguration` naming the parameter: a page
    ///   outside 1 to 1,000,000, a size outside 1 to 100, a sort key that is
    ///   not `property(,asc|desc)` of a known property, or one named twice.
    public init(page: Int = 1, size: Int = 20, sort: [String] = []) throws(TokenMintError) {
        guard (1...Self.maximumPage).contains(page) else { throw TokenMintError(.pay.invalidConfiguration, "page is a number from 1 to \(Self.maximumPage)") }
        guard (1...Self.maximumSize).contains(size) else { throw TokenMintError(.pay.invalidConfiguration, "size is a number from 1 to \(Self.maximumSize)") }
        guard sort.count <= Property.allCases.count else { throw TokenMintError(.pay.invalidConfiguration, "at most \(Property.allCases.count) sort keys") }
        var orders: [Order] = []
        for key in sort {
            let parts = key.split(separator: ",", omittingEmptySubsequences: false)
            guard (1...2).contains(parts.count), let property = Property(rawValue: String(parts[0])) else {
                throw TokenMintError(.pay.invalidConfiguration, "sort is property(,asc|desc) with property one of "
                    + Property.allCases.map(\.rawValue).joined(separator: ", ") + ", not \"\(key.prefix(64))\"")
            }
            let direction = parts.count == 2 ? parts[1].lowercased() : "asc"
            guard direction == "asc" || direction == "desc" else { throw TokenMintError(.pay.invalidConfiguration, "a sort direction is asc or desc") }
            guard !orders.contains(where: { $0.property == property }) else {
                throw TokenMintError(.pay.invalidConfiguration, "sort names \(property.rawValue) twice")
            }
            orders.append(Order(property: property, ascending: direction == "asc"))
        }
        self.page = page
        self.size = size
        self.orders = orders.isEmpty ? [Order(property: .createdAt, ascending: false)] : orders
    }

    /// Parses the query's text values (`page`, `size` as decimal numbers).
    public init(page: String?, size: String?, sort: [String]) throws(TokenMintError) {
        func number(_ name: String, _ text: String?, _ fallback: Int) throws(TokenMintError) -> Int {
            guard let text else { return fallback }
            guard (1...7).contains(text.utf8.count), text.utf8.allSatisfy({ (48...57).contains($0) }), let value = Int(text) else {
                throw TokenMintError(.pay.invalidConfiguration, "\(name) is a decimal number")
            }
            return value
        }
        try self.init(page: try number("page", page, 1), size: try number("size", size, 20), sort: sort)
    }
}

/// One page of transactions, as the seed's `TransactionResponse`.
public struct TransactionResponse: Sendable, Hashable {
    /// The page's transactions.
    public var transactions: [PaymentTransaction]
    /// The page number, from 1.
    public var page: Int
    /// The page size asked for.
    public var size: Int
    /// Transactions in all pages.
    public var totalElements: Int64
    /// Pages in all.
    public var totalPages: Int64
    /// The sort keys in effect.
    public var sort: [String]

    /// A page.
    public init(transactions: [PaymentTransaction], page: Int, size: Int, totalElements: Int64, totalPages: Int64, sort: [String]) {
        self.transactions = transactions
        self.page = page
        self.size = size
        self.totalElements = totalElements
        self.totalPages = totalPages
        self.sort = sort
    }
}

/// What both token kinds are to a host: a string to show or encode.
public protocol Token: Sendable {
    /// The token as text (`01/…` or `02/…`).
    var stringRepresentation: String { get }
}

extension EnrolmentToken: Token {
    /// The token string.
    public var stringRepresentation: String { description }
}

extension PaymentToken: Token {
    /// The token string.
    public var stringRepresentation: String { description }
}
