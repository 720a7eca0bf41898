// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.24;

// A test USDT for the sandbox chain: Ethereum's Tether USD where a payment engine
// meets it ("Tether USD", "USDT", 6 decimals). `transfer`, `transferFrom` and
// `approve` return nothing, not a bool, so a caller that expects one fails as it
// would on mainnet; `approve` refuses to change a non-zero allowance to another
// non-zero value (set it to 0 first), and an allowance of 2^256-1 is never spent
// down, as in Tether's contract. Reverts carry no reason, as Tether's. No permit,
// no EIP-3009, no fee, no blacklist or pause. A mint only the deployer may call
// (the sandbox faucet). Written for the sandbox, not Tether's code; not for any
// real network.

contract TestUSDT {
    string public constant name = "Tether USD";
    string public constant symbol = "USDT";
    uint8 public constant decimals = 6;

    address public immutable owner;
    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    constructor() {
        owner = msg.sender;
    }

    function transfer(address to, uint256 value) external {
        _transfer(msg.sender, to, value);
    }

    function transferFrom(address from, address to, uint256 value) external {
        uint256 allowed = allowance[from][msg.sender];
        if (allowed != type(uint256).max) {
            require(allowed >= value);
            allowance[from][msg.sender] = allowed - value;
        }
        _transfer(from, to, value);
    }

    function approve(address spender, uint256 value) external {
        // Tether's guard against the approve front-running race.
        require(!(value != 0 && allowance[msg.sender][spender] != 0));
        allowance[msg.sender][spender] = value;
        emit Approval(msg.sender, spender, value);
    }

    /// Test tokens out of thin air, for the sandbox faucet: the deployer only.
    function mint(address to, uint256 amount) external {
        require(msg.sender == owner);
        require(to != address(0));
        totalSupply += amount;
        balanceOf[to] += amount;
        emit Transfer(address(0), to, amount);
    }

    function _transfer(address from, address to, uint256 value) private {
        require(to != address(0));
        uint256 balance = balanceOf[from];
        require(balance >= value);
        balanceOf[from] = balance - value;
        balanceOf[to] += value;
        emit Transfer(from, to, value);
    }
}
