// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.37;

// Never deployed: an eth_call state override puts this code at the collector's
// address and at the deployer's, so that one simulated call can deploy a
// buyer's account (ERC-6492: its factory and calldata) as the deployer will,
// then take the buyer's receiveWithAuthorization, which the token takes only
// from the payee (the collector). Nothing is sent; the node forgets it all.
contract ReceiveSimulator {
    /// What `simulate` returns when both calls pass: a node that ignored the
    /// override would answer an empty success from the collector's bare account.
    bytes32 private constant SIMULATED = keccak256("pay-engine ReceiveSimulator");

    /// The factory call reverted: its own revert data, as it gave it.
    error DeploymentFailed(bytes reason);

    /// At the collector's address: the factory call through `deployer`, then the receive as the collector.
    function simulate(
        address deployer,
        address factory,
        bytes calldata factoryData,
        address token,
        bytes calldata receiveData
    ) external returns (bytes32) {
        (bool deployed, bytes memory reason) = deployer.call(abi.encodeCall(this.forward, (factory, factoryData)));
        if (!deployed) revert DeploymentFailed(reason);
        (bool received, bytes memory result) = token.call(receiveData);
        // The token's revert data as it is: its reason ("FiatTokenV2: invalid signature") reads as if called directly.
        if (!received) bubble(result);
        return SIMULATED;
    }

    /// At the deployer's address: the buyer's factory call never runs as the collector, even simulated.
    function forward(address target, bytes calldata data) external {
        (bool ok, bytes memory result) = target.call(data);
        if (!ok) bubble(result);
    }

    function bubble(bytes memory data) private pure {
        assembly {
            revert(add(data, 32), mload(data))
        }
    }
}
