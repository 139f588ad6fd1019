import TokenMint
print(TokenMintVersion.string)
