// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.24;

// A test DAI for the sandbox chain: a plain 18-decimal ERC-20 ("Dai Stablecoin",
// "DAI") that returns its bools, paid through Permit2 (no EIP-3009, and not DAI's
// own permit), with a mint only the deployer may call (the sandbox faucet). Not
// for any real network.

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";

contract TestDAI is ERC20, Ownable {
    constructor() ERC20("Dai Stablecoin", "DAI") Ownable(msg.sender) {}

    /// Test tokens out of thin air, for the sandbox faucet: the deployer only.
    function mint(address to, uint256 amount) external onlyOwner {
        _mint(to, amount);
    }
}
