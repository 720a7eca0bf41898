#!/usr/bin/env node
// The installed package's wallet: the built module (`npm run build`).
import "../dist/wallet-main.js"
