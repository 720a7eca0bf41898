// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.24;

// The signature-transfer half of Uniswap's Permit2, written for the sandbox chain
// (not Uniswap's code): the same functions, structs, errors, event, EIP-712 domain
// and type hashes, so a wallet or SDK that signs for Permit2 signs for this, and the
// engine's calls are the ones it makes on a real chain. The sandbox copies its
// runtime code to Permit2's canonical address, so nothing here may depend on the
// address it was deployed at: the domain separator is computed at each call.
// AllowanceTransfer and the batch forms are left out. Not for any real network.

interface IERC1271 {
    function isValidSignature(bytes32 hash, bytes memory signature) external view returns (bytes4);
}

contract SandboxPermit2 {
    struct TokenPermissions {
        address token;
        uint256 amount;
    }

    struct PermitTransferFrom {
        TokenPermissions permitted;
        uint256 nonce;
        uint256 deadline;
    }

    struct SignatureTransferDetails {
        address to;
        uint256 requestedAmount;
    }

    error InvalidNonce();
    error SignatureExpired(uint256 signatureDeadline);
    error InvalidAmount(uint256 maxAmount);
    error InvalidSignatureLength();
    error InvalidSignature();
    error InvalidSigner();
    error InvalidContractSignature();
    error TransferFailed();

    event UnorderedNonceInvalidation(address indexed owner, uint256 word, uint256 mask);

    bytes32 private constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,uint256 chainId,address verifyingContract)");
    bytes32 private constant NAME_HASH = keccak256("Permit2");
    bytes32 private constant TOKEN_PERMISSIONS_TYPEHASH = keccak256("TokenPermissions(address token,uint256 amount)");
    bytes32 private constant PERMIT_TRANSFER_FROM_TYPEHASH = keccak256(
        "PermitTransferFrom(TokenPermissions permitted,address spender,uint256 nonce,uint256 deadline)TokenPermissions(address token,uint256 amount)"
    );
    // The caller completes it with its witness's type: "<Type> witness)<Type>(...)TokenPermissions(...)".
    string private constant PERMIT_WITNESS_TRANSFER_FROM_TYPEHASH_STUB =
        "PermitWitnessTransferFrom(TokenPermissions permitted,address spender,uint256 nonce,uint256 deadline,";
    bytes4 private constant ERC1271_MAGIC_VALUE = 0x1626ba7e;
    // EIP-2098: the top bit of `vs` is the parity, the rest is s.
    bytes32 private constant LOWER_255_BITS = 0x7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff;

    /// owner => word position (nonce >> 8) => bits of the used nonces (bit nonce & 0xff).
    mapping(address => mapping(uint256 => uint256)) public nonceBitmap;

    // solhint-disable-next-line func-name-mixedcase
    function DOMAIN_SEPARATOR() public view returns (bytes32) {
        return keccak256(abi.encode(DOMAIN_TYPEHASH, NAME_HASH, block.chainid, address(this)));
    }

    function permitTransferFrom(
        PermitTransferFrom calldata permit,
        SignatureTransferDetails calldata transferDetails,
        address owner,
        bytes calldata signature
    ) external {
        bytes32 structHash = keccak256(
            abi.encode(
                PERMIT_TRANSFER_FROM_TYPEHASH,
                _hashTokenPermissions(permit.permitted),
                msg.sender,
                permit.nonce,
                permit.deadline
            )
        );
        _permitTransferFrom(permit, transferDetails, owner, structHash, signature);
    }

    function permitWitnessTransferFrom(
        PermitTransferFrom calldata permit,
        SignatureTransferDetails calldata transferDetails,
        address owner,
        bytes32 witness,
        string calldata witnessTypeString,
        bytes calldata signature
    ) external {
        bytes32 typeHash = keccak256(abi.encodePacked(PERMIT_WITNESS_TRANSFER_FROM_TYPEHASH_STUB, witnessTypeString));
        bytes32 structHash = keccak256(
            abi.encode(
                typeHash, _hashTokenPermissions(permit.permitted), msg.sender, permit.nonce, permit.deadline, witness
            )
        );
        _permitTransferFrom(permit, transferDetails, owner, structHash, signature);
    }

    /// Marks the bits of `mask` used in the caller's word `wordPos`: signatures with those nonces fail.
    function invalidateUnorderedNonces(uint256 wordPos, uint256 mask) external {
        nonceBitmap[msg.sender][wordPos] |= mask;
        emit UnorderedNonceInvalidation(msg.sender, wordPos, mask);
    }

    // The order of the checks is Permit2's, so the same bad permit fails with the same error.
    function _permitTransferFrom(
        PermitTransferFrom calldata permit,
        SignatureTransferDetails calldata transferDetails,
        address owner,
        bytes32 structHash,
        bytes calldata signature
    ) private {
        if (block.timestamp > permit.deadline) revert SignatureExpired(permit.deadline);
        if (transferDetails.requestedAmount > permit.permitted.amount) {
            revert InvalidAmount(permit.permitted.amount);
        }
        _useUnorderedNonce(owner, permit.nonce);
        _verify(keccak256(abi.encodePacked("\x19\x01", DOMAIN_SEPARATOR(), structHash)), owner, signature);
        _safeTransferFrom(permit.permitted.token, owner, transferDetails.to, transferDetails.requestedAmount);
    }

    function _hashTokenPermissions(TokenPermissions calldata permitted) private pure returns (bytes32) {
        return keccak256(abi.encode(TOKEN_PERMISSIONS_TYPEHASH, permitted.token, permitted.amount));
    }

    function _useUnorderedNonce(address owner, uint256 nonce) private {
        uint256 wordPos = nonce >> 8;
        uint256 bit = 1 << (nonce & 0xff);
        uint256 word = nonceBitmap[owner][wordPos];
        if (word & bit != 0) revert InvalidNonce();
        nonceBitmap[owner][wordPos] = word | bit;
    }

    // As Permit2: an owner without code signs with its key (65 bytes, or EIP-2098's 64), one
    // with code (a contract, or an EOA delegated by EIP-7702) answers through ERC-1271. Like
    // Permit2, a high s is not refused, and a revert of isValidSignature is passed on as is.
    function _verify(bytes32 hash, address owner, bytes calldata signature) private view {
        if (owner.code.length == 0) {
            bytes32 r;
            bytes32 s;
            uint8 v;
            if (signature.length == 65) {
                r = bytes32(signature[0:32]);
                s = bytes32(signature[32:64]);
                v = uint8(signature[64]);
            } else if (signature.length == 64) {
                r = bytes32(signature[0:32]);
                bytes32 vs = bytes32(signature[32:64]);
                s = vs & LOWER_255_BITS;
                v = uint8(uint256(vs) >> 255) + 27;
            } else {
                revert InvalidSignatureLength();
            }
            address signer = ecrecover(hash, v, r, s);
            if (signer == address(0)) revert InvalidSignature();
            if (signer != owner) revert InvalidSigner();
        } else if (IERC1271(owner).isValidSignature(hash, signature) != ERC1271_MAGIC_VALUE) {
            revert InvalidContractSignature();
        }
    }

    // Tokens that return nothing (USDT) pass, as they do through Permit2's solmate
    // SafeTransferLib; a false return or a revert fails. As there, a token address without
    // code is not refused: it is the signer's and the caller's to get right.
    function _safeTransferFrom(address token, address from, address to, uint256 amount) private {
        (bool ok, bytes memory returned) =
            token.call(abi.encodeWithSelector(0x23b872dd, from, to, amount)); // transferFrom(address,address,uint256)
        if (!ok || (returned.length != 0 && (returned.length < 32 || abi.decode(returned, (uint256)) != 1))) {
            revert TransferFailed();
        }
    }
}
