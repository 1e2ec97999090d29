"""Text: sentence segmentation, lexical matching and the lexical signals (BM25, min-max,
background document frequencies) that the local and global stages read."""
