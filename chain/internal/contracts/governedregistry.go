// Code generated via abigen V2 - DO NOT EDIT.
// This file is a generated binding and any manual changes will be lost.

package contracts

import (
	"bytes"
	"errors"
	"math/big"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// Reference imports to suppress errors if they are not otherwise used.
var (
	_ = bytes.Equal
	_ = errors.New
	_ = big.NewInt
	_ = common.Big1
	_ = types.BloomLookup
	_ = abi.ConvertType
)

// GovernedRegistryMetaData contains all meta data concerning the GovernedRegistry contract.
var GovernedRegistryMetaData = bind.MetaData{
	ABI: "[{\"inputs\":[{\"internalType\":\"address\",\"name\":\"owner_\",\"type\":\"address\"}],\"stateMutability\":\"nonpayable\",\"type\":\"constructor\"},{\"inputs\":[],\"name\":\"BadBatch\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"BadPublicInputs\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"root\",\"type\":\"uint256\"}],\"name\":\"BatchExists\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"circuitId\",\"type\":\"uint256\"}],\"name\":\"CircuitExists\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"issuerKeyHash\",\"type\":\"uint256\"}],\"name\":\"IssuerExists\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"issuerKeyHash\",\"type\":\"uint256\"}],\"name\":\"IssuerNotActive\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"account\",\"type\":\"address\"}],\"name\":\"NotAContract\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"account\",\"type\":\"address\"}],\"name\":\"NotIssuerAdmin\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"NotOwner\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"account\",\"type\":\"address\"}],\"name\":\"NotSubmitter\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"ProofRejected\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"circuitId\",\"type\":\"uint256\"}],\"name\":\"UnknownCircuit\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"ZeroAddress\",\"type\":\"error\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"uint256\",\"name\":\"root\",\"type\":\"uint256\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"size\",\"type\":\"uint256\"},{\"indexed\":false,\"internalType\":\"uint256[]\",\"name\":\"circuitIds\",\"type\":\"uint256[]\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"submitter\",\"type\":\"address\"}],\"name\":\"BatchRecorded\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"uint256\",\"name\":\"circuitId\",\"type\":\"uint256\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"verifier\",\"type\":\"address\"}],\"name\":\"CircuitAdded\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"uint256\",\"name\":\"issuerKeyHash\",\"type\":\"uint256\"},{\"indexed\":false,\"internalType\":\"address\",\"name\":\"admin\",\"type\":\"address\"}],\"name\":\"IssuerRegistered\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"uint256\",\"name\":\"issuerKeyHash\",\"type\":\"uint256\"}],\"name\":\"IssuerRetired\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"uint256\",\"name\":\"issuerKeyHash\",\"type\":\"uint256\"},{\"indexed\":true,\"internalType\":\"uint64\",\"name\":\"nonce\",\"type\":\"uint64\"}],\"name\":\"NonceRevoked\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"uint256\",\"name\":\"digest\",\"type\":\"uint256\"},{\"indexed\":true,\"internalType\":\"uint256\",\"name\":\"issuerKeyHash\",\"type\":\"uint256\"},{\"indexed\":true,\"internalType\":\"uint256\",\"name\":\"circuitId\",\"type\":\"uint256\"},{\"indexed\":false,\"internalType\":\"address\",\"name\":\"verifier\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"address\",\"name\":\"submitter\",\"type\":\"address\"}],\"name\":\"StatementRecorded\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"address\",\"name\":\"submitter\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"bool\",\"name\":\"registered\",\"type\":\"bool\"}],\"name\":\"SubmitterSet\",\"type\":\"event\"},{\"inputs\":[],\"name\":\"MAX_BATCH\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"circuitId\",\"type\":\"uint256\"},{\"internalType\":\"address\",\"name\":\"verifier\",\"type\":\"address\"}],\"name\":\"addCircuit\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"root\",\"type\":\"uint256\"}],\"name\":\"batchRecordedIn\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"blockNumber\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"issuerKeyHash\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"blockNumber\",\"type\":\"uint256\"}],\"name\":\"isIssuerActiveAt\",\"outputs\":[{\"internalType\":\"bool\",\"name\":\"\",\"type\":\"bool\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"issuerKeyHash\",\"type\":\"uint256\"},{\"internalType\":\"uint64\",\"name\":\"nonce\",\"type\":\"uint64\"}],\"name\":\"isRevoked\",\"outputs\":[{\"internalType\":\"bool\",\"name\":\"\",\"type\":\"bool\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"submitter\",\"type\":\"address\"}],\"name\":\"isSubmitter\",\"outputs\":[{\"internalType\":\"bool\",\"name\":\"\",\"type\":\"bool\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"issuerKeyHash\",\"type\":\"uint256\"}],\"name\":\"issuers\",\"outputs\":[{\"internalType\":\"uint64\",\"name\":\"registeredAt\",\"type\":\"uint64\"},{\"internalType\":\"uint64\",\"name\":\"retiredAt\",\"type\":\"uint64\"},{\"internalType\":\"address\",\"name\":\"admin\",\"type\":\"address\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"owner\",\"outputs\":[{\"internalType\":\"address\",\"name\":\"\",\"type\":\"address\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"circuitId\",\"type\":\"uint256\"},{\"internalType\":\"uint256[8]\",\"name\":\"proof\",\"type\":\"uint256[8]\"},{\"internalType\":\"uint256[]\",\"name\":\"publicInputs\",\"type\":\"uint256[]\"}],\"name\":\"record\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"root\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"size\",\"type\":\"uint256\"},{\"internalType\":\"uint256[]\",\"name\":\"circuitIds\",\"type\":\"uint256[]\"}],\"name\":\"recordBatch\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"issuerKeyHash\",\"type\":\"uint256\"},{\"internalType\":\"address\",\"name\":\"admin\",\"type\":\"address\"}],\"name\":\"registerIssuer\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"issuerKeyHash\",\"type\":\"uint256\"}],\"name\":\"retireIssuer\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"issuerKeyHash\",\"type\":\"uint256\"},{\"internalType\":\"uint64\",\"name\":\"nonce\",\"type\":\"uint64\"}],\"name\":\"revokeNonce\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"issuerKeyHash\",\"type\":\"uint256\"},{\"internalType\":\"uint64\",\"name\":\"nonce\",\"type\":\"uint64\"}],\"name\":\"revokedIn\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"blockNumber\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"submitter\",\"type\":\"address\"},{\"internalType\":\"bool\",\"name\":\"registered\",\"type\":\"bool\"}],\"name\":\"setSubmitter\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"circuitId\",\"type\":\"uint256\"}],\"name\":\"verifierOf\",\"outputs\":[{\"internalType\":\"address\",\"name\":\"verifier\",\"type\":\"address\"}],\"stateMutability\":\"view\",\"type\":\"function\"}]",
	ID:  "GovernedRegistry",
	Bin: "0x60a060405234801561001057600080fd5b5060405161118d38038061118d83398101604081905261002f91610067565b6001600160a01b0381166100565760405163d92e233d60e01b815260040160405180910390fd5b6001600160a01b0316608052610097565b60006020828403121561007957600080fd5b81516001600160a01b038116811461009057600080fd5b9392505050565b6080516110b86100d5600039600081816102730152818161035f015281816104c6015281816105bf0152818161074b0152610adf01526110b86000f3fe608060405234801561001057600080fd5b50600436106101005760003560e01c806365f6a9091161009757806396fbdc991161006657806396fbdc99146102b65780639bd6f65e146102c9578063a926fdbc146102f2578063f85d2cbb1461031557600080fd5b806365f6a909146102485780636a95dc181461025b5780638da5cb5b1461026e578063950bff9f146102ad57600080fd5b8063350d1dfa116100d3578063350d1dfa1461018e5780633fc119f5146101a1578063566b0a12146101b457806361ec30c4146101d457600080fd5b80630b6e7ada1461010557806312441be51461012d57806315a1a3ba146101665780632b84ca4e1461017b575b600080fd5b610118610113366004610dcd565b610328565b60405190151581526020015b60405180910390f35b61015861013b366004610dcd565b600360209081526000928352604080842090915290825290205481565b604051908152602001610124565b610179610174366004610e25565b610354565b005b610179610189366004610dcd565b6104ad565b61017961019c366004610e51565b6105b4565b6101186101af366004610e6a565b6106aa565b6101586101c2366004610e51565b60046020526000908152604090205481565b6102196101e2366004610e51565b600160208190526000918252604090912080549101546001600160401b0380831692600160401b900416906001600160a01b031683565b604080516001600160401b0394851681529390921660208401526001600160a01b031690820152606001610124565b610179610256366004610e25565b610740565b610179610269366004610ed7565b610851565b6102957f000000000000000000000000000000000000000000000000000000000000000081565b6040516001600160a01b039091168152602001610124565b61015861040081565b6101796102c4366004610f37565b610ad4565b6102956102d7366004610e51565b6002602052600090815260409020546001600160a01b031681565b610118610300366004610f68565b60006020819052908152604090205460ff1681565b610179610323366004610f8a565b610b9a565b60008281526003602090815260408083206001600160401b038516845290915290205415155b92915050565b336001600160a01b037f0000000000000000000000000000000000000000000000000000000000000000161461039d576040516330cd747160e01b815260040160405180910390fd5b6000828152600160205260409020546001600160401b0316156103db5760405163455e6c3360e01b8152600481018390526024015b60405180910390fd5b604080516060810182526001600160401b034381168252600060208084018281526001600160a01b03808816868801908152898552600193849052938790209551865492518616600160401b026fffffffffffffffffffffffffffffffff19909316951694909417178455905192018054929091166001600160a01b03199092169190911790555182907f2855e54c20bb744c578ed4e05a6f62b433e01f0da31d7a0e1ff9a0189f95f51d906104a19084906001600160a01b0391909116815260200190565b60405180910390a25050565b6000828152600160205260409020336001600160a01b037f00000000000000000000000000000000000000000000000000000000000000001614801590610516575060018101546001600160a01b03161580610516575060018101546001600160a01b03163314155b156105365760405163160cc4c560e31b81523360048201526024016103d2565b60008381526003602090815260408083206001600160401b038616845290915281205490036105af5760008381526003602090815260408083206001600160401b038616808552925280832043905551909185917f897aea19aebc104a05acc07487a17a626a5403d9cdef86d01feb6ff1b22247ef9190a35b505050565b336001600160a01b037f000000000000000000000000000000000000000000000000000000000000000016146105fd576040516330cd747160e01b815260040160405180910390fd5b600081815260016020526040902080546001600160401b0316158061063257508054600160401b90046001600160401b031615155b1561065357604051631290e57d60e21b8152600481018390526024016103d2565b80546fffffffffffffffff00000000000000001916600160401b436001600160401b03160217815560405182907f814471ba98107b70880b24c5dcac01bb6b6fc4e2ac91d9e95a5f86efd06aad4490600090a25050565b6000828152600160208181526040808420815160608101835281546001600160401b03808216808452600160401b90920416948201949094529301546001600160a01b0316908301521580159061070b575080516001600160401b03168310155b8015610738575060208101516001600160401b03161580610738575080602001516001600160401b031683105b949350505050565b336001600160a01b037f00000000000000000000000000000000000000000000000000000000000000001614610789576040516330cd747160e01b815260040160405180910390fd5b6000828152600260205260409020546001600160a01b0316156107c25760405163607e5aa960e01b8152600481018390526024016103d2565b806001600160a01b03163b6000036107f8576040516322a2d07b60e21b81526001600160a01b03821660048201526024016103d2565b60008281526002602052604080822080546001600160a01b0319166001600160a01b0385169081179091559051909184917f66e1446126921f2f770749e49e9ea91acb98f5faac8978a27b5f38594509b1a19190a35050565b3360009081526020819052604090205460ff1661088357604051630b5024e560e11b81523360048201526024016103d2565b6003811415806108ac575083828260028181106108a2576108a2610fc4565b9050602002013514155b156108ca57604051634e403b3160e11b815260040160405180910390fd5b6000848152600260205260409020546001600160a01b0316806109035760405163253129eb60e21b8152600481018690526024016103d2565b6109268383600081811061091957610919610fc4565b90506020020135436106aa565b610960578282600081811061093d5761093d610fc4565b90506020020135604051631290e57d60e21b81526004016103d291815260200190565b600080826001600160a01b03168686866040516024016109829392919061100c565b60408051601f198184030181529181526020820180516001600160e01b0316632833f41360e11b179052516109b79190611035565b600060405180830381855afa9150503d80600081146109f2576040519150601f19603f3d011682016040523d82523d6000602084013e6109f7565b606091505b5091509150811580610a0b57508051602014155b80610a2a575080806020019051810190610a259190611064565b600114155b15610a485760405163c3b0d8cd60e01b815260040160405180910390fd5b8685856000818110610a5c57610a5c610fc4565b9050602002013586866001818110610a7657610a76610fc4565b905060200201357f39735be51bbcbda80652bfede7addc8200488d6a4c358e8ab69264a2456ade198633604051610ac39291906001600160a01b0392831681529116602082015260400190565b60405180910390a450505050505050565b336001600160a01b037f00000000000000000000000000000000000000000000000000000000000000001614610b1d576040516330cd747160e01b815260040160405180910390fd5b6001600160a01b038216610b445760405163d92e233d60e01b815260040160405180910390fd5b6001600160a01b03821660008181526020818152604091829020805460ff191685151590811790915591519182527f54992e75d6204e64e6576ace5c7d2782c63fbb124424beb2fbaf3199c881761891016104a1565b3360009081526020819052604090205460ff16610bcc57604051630b5024e560e11b81523360048201526024016103d2565b831580610bf957507f30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f00000018410155b80610c02575082155b80610c0e575061040083115b15610c2c576040516321af709760e21b815260040160405180910390fd5b801580610c3857508281115b15610c56576040516321af709760e21b815260040160405180910390fd5b60005b81811015610d4557600081118015610cab57508282610c7960018461107d565b818110610c8857610c88610fc4565b90506020020135838383818110610ca157610ca1610fc4565b9050602002013511155b15610cc9576040516321af709760e21b815260040160405180910390fd5b6000600281858585818110610ce057610ce0610fc4565b60209081029290920135835250810191909152604001600020546001600160a01b031603610d3d57828282818110610d1a57610d1a610fc4565b9050602002013560405163253129eb60e21b81526004016103d291815260200190565b600101610c59565b5060008481526004602052604090205415610d7657604051633aa8cfe960e01b8152600481018590526024016103d2565b6000848152600460205260409081902043905551339085907f5f7b76fec3af8b4e74ee26d8f33405ee6c99acad9d6eb00bfb2a5e370dc1e87a90610dbf9087908790879061109e565b60405180910390a350505050565b60008060408385031215610de057600080fd5b8235915060208301356001600160401b0381168114610dfe57600080fd5b809150509250929050565b80356001600160a01b0381168114610e2057600080fd5b919050565b60008060408385031215610e3857600080fd5b82359150610e4860208401610e09565b90509250929050565b600060208284031215610e6357600080fd5b5035919050565b60008060408385031215610e7d57600080fd5b50508035926020909101359150565b60008083601f840112610e9e57600080fd5b5081356001600160401b03811115610eb557600080fd5b6020830191508360208260051b8501011115610ed057600080fd5b9250929050565b6000806000806101408587031215610eee57600080fd5b84359350610120850186811115610f0457600080fd5b602086019350356001600160401b03811115610f1f57600080fd5b610f2b87828801610e8c565b95989497509550505050565b60008060408385031215610f4a57600080fd5b610f5383610e09565b915060208301358015158114610dfe57600080fd5b600060208284031215610f7a57600080fd5b610f8382610e09565b9392505050565b60008060008060608587031215610fa057600080fd5b843593506020850135925060408501356001600160401b03811115610f1f57600080fd5b634e487b7160e01b600052603260045260246000fd5b81835260006001600160fb1b03831115610ff357600080fd5b8260051b80836020870137939093016020019392505050565b610100848237610120610100820152600061102c61012083018486610fda565b95945050505050565b6000825160005b81811015611056576020818601810151858301520161103c565b506000920191825250919050565b60006020828403121561107657600080fd5b5051919050565b8181038181111561034e57634e487b7160e01b600052601160045260246000fd5b83815260406020820152600061102c604083018486610fda56",
}

// GovernedRegistry is an auto generated Go binding around an Ethereum contract.
type GovernedRegistry struct {
	abi abi.ABI
}

// GetABI returns the ABI associated with this contract binding.
func (c *GovernedRegistry) GetABI() abi.ABI {
	return c.abi
}

// NewGovernedRegistry creates a new instance of GovernedRegistry.
func NewGovernedRegistry() *GovernedRegistry {
	parsed, err := GovernedRegistryMetaData.ParseABI()
	if err != nil {
		panic(errors.New("invalid ABI: " + err.Error()))
	}
	return &GovernedRegistry{abi: *parsed}
}

// Instance creates a wrapper for a deployed contract instance at the given address.
// Use this to create the instance object passed to abigen v2 library functions Call, Transact, etc.
func (c *GovernedRegistry) Instance(backend bind.ContractBackend, addr common.Address) *bind.BoundContract {
	return bind.NewBoundContract(addr, c.abi, backend, backend, backend)
}

// PackConstructor is the Go binding used to pack the parameters required for
// contract deployment.
//
// Solidity: constructor(address owner_) returns()
func (governedRegistry *GovernedRegistry) PackConstructor(owner_ common.Address) []byte {
	enc, err := governedRegistry.abi.Pack("", owner_)
	if err != nil {
		panic(err)
	}
	return enc
}

// PackMAXBATCH is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x950bff9f.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function MAX_BATCH() view returns(uint256)
func (governedRegistry *GovernedRegistry) PackMAXBATCH() []byte {
	enc, err := governedRegistry.abi.Pack("MAX_BATCH")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackMAXBATCH is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x950bff9f.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function MAX_BATCH() view returns(uint256)
func (governedRegistry *GovernedRegistry) TryPackMAXBATCH() ([]byte, error) {
	return governedRegistry.abi.Pack("MAX_BATCH")
}

// UnpackMAXBATCH is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x950bff9f.
//
// Solidity: function MAX_BATCH() view returns(uint256)
func (governedRegistry *GovernedRegistry) UnpackMAXBATCH(data []byte) (*big.Int, error) {
	out, err := governedRegistry.abi.Unpack("MAX_BATCH", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackAddCircuit is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x65f6a909.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function addCircuit(uint256 circuitId, address verifier) returns()
func (governedRegistry *GovernedRegistry) PackAddCircuit(circuitId *big.Int, verifier common.Address) []byte {
	enc, err := governedRegistry.abi.Pack("addCircuit", circuitId, verifier)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackAddCircuit is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x65f6a909.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function addCircuit(uint256 circuitId, address verifier) returns()
func (governedRegistry *GovernedRegistry) TryPackAddCircuit(circuitId *big.Int, verifier common.Address) ([]byte, error) {
	return governedRegistry.abi.Pack("addCircuit", circuitId, verifier)
}

// PackBatchRecordedIn is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x566b0a12.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function batchRecordedIn(uint256 root) view returns(uint256 blockNumber)
func (governedRegistry *GovernedRegistry) PackBatchRecordedIn(root *big.Int) []byte {
	enc, err := governedRegistry.abi.Pack("batchRecordedIn", root)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackBatchRecordedIn is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x566b0a12.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function batchRecordedIn(uint256 root) view returns(uint256 blockNumber)
func (governedRegistry *GovernedRegistry) TryPackBatchRecordedIn(root *big.Int) ([]byte, error) {
	return governedRegistry.abi.Pack("batchRecordedIn", root)
}

// UnpackBatchRecordedIn is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x566b0a12.
//
// Solidity: function batchRecordedIn(uint256 root) view returns(uint256 blockNumber)
func (governedRegistry *GovernedRegistry) UnpackBatchRecordedIn(data []byte) (*big.Int, error) {
	out, err := governedRegistry.abi.Unpack("batchRecordedIn", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackIsIssuerActiveAt is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x3fc119f5.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function isIssuerActiveAt(uint256 issuerKeyHash, uint256 blockNumber) view returns(bool)
func (governedRegistry *GovernedRegistry) PackIsIssuerActiveAt(issuerKeyHash *big.Int, blockNumber *big.Int) []byte {
	enc, err := governedRegistry.abi.Pack("isIssuerActiveAt", issuerKeyHash, blockNumber)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackIsIssuerActiveAt is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x3fc119f5.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function isIssuerActiveAt(uint256 issuerKeyHash, uint256 blockNumber) view returns(bool)
func (governedRegistry *GovernedRegistry) TryPackIsIssuerActiveAt(issuerKeyHash *big.Int, blockNumber *big.Int) ([]byte, error) {
	return governedRegistry.abi.Pack("isIssuerActiveAt", issuerKeyHash, blockNumber)
}

// UnpackIsIssuerActiveAt is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x3fc119f5.
//
// Solidity: function isIssuerActiveAt(uint256 issuerKeyHash, uint256 blockNumber) view returns(bool)
func (governedRegistry *GovernedRegistry) UnpackIsIssuerActiveAt(data []byte) (bool, error) {
	out, err := governedRegistry.abi.Unpack("isIssuerActiveAt", data)
	if err != nil {
		return *new(bool), err
	}
	out0 := *abi.ConvertType(out[0], new(bool)).(*bool)
	return out0, nil
}

// PackIsRevoked is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x0b6e7ada.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function isRevoked(uint256 issuerKeyHash, uint64 nonce) view returns(bool)
func (governedRegistry *GovernedRegistry) PackIsRevoked(issuerKeyHash *big.Int, nonce uint64) []byte {
	enc, err := governedRegistry.abi.Pack("isRevoked", issuerKeyHash, nonce)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackIsRevoked is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x0b6e7ada.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function isRevoked(uint256 issuerKeyHash, uint64 nonce) view returns(bool)
func (governedRegistry *GovernedRegistry) TryPackIsRevoked(issuerKeyHash *big.Int, nonce uint64) ([]byte, error) {
	return governedRegistry.abi.Pack("isRevoked", issuerKeyHash, nonce)
}

// UnpackIsRevoked is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x0b6e7ada.
//
// Solidity: function isRevoked(uint256 issuerKeyHash, uint64 nonce) view returns(bool)
func (governedRegistry *GovernedRegistry) UnpackIsRevoked(data []byte) (bool, error) {
	out, err := governedRegistry.abi.Unpack("isRevoked", data)
	if err != nil {
		return *new(bool), err
	}
	out0 := *abi.ConvertType(out[0], new(bool)).(*bool)
	return out0, nil
}

// PackIsSubmitter is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xa926fdbc.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function isSubmitter(address submitter) view returns(bool)
func (governedRegistry *GovernedRegistry) PackIsSubmitter(submitter common.Address) []byte {
	enc, err := governedRegistry.abi.Pack("isSubmitter", submitter)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackIsSubmitter is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xa926fdbc.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function isSubmitter(address submitter) view returns(bool)
func (governedRegistry *GovernedRegistry) TryPackIsSubmitter(submitter common.Address) ([]byte, error) {
	return governedRegistry.abi.Pack("isSubmitter", submitter)
}

// UnpackIsSubmitter is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xa926fdbc.
//
// Solidity: function isSubmitter(address submitter) view returns(bool)
func (governedRegistry *GovernedRegistry) UnpackIsSubmitter(data []byte) (bool, error) {
	out, err := governedRegistry.abi.Unpack("isSubmitter", data)
	if err != nil {
		return *new(bool), err
	}
	out0 := *abi.ConvertType(out[0], new(bool)).(*bool)
	return out0, nil
}

// PackIssuers is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x61ec30c4.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function issuers(uint256 issuerKeyHash) view returns(uint64 registeredAt, uint64 retiredAt, address admin)
func (governedRegistry *GovernedRegistry) PackIssuers(issuerKeyHash *big.Int) []byte {
	enc, err := governedRegistry.abi.Pack("issuers", issuerKeyHash)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackIssuers is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x61ec30c4.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function issuers(uint256 issuerKeyHash) view returns(uint64 registeredAt, uint64 retiredAt, address admin)
func (governedRegistry *GovernedRegistry) TryPackIssuers(issuerKeyHash *big.Int) ([]byte, error) {
	return governedRegistry.abi.Pack("issuers", issuerKeyHash)
}

// IssuersOutput serves as a container for the return parameters of contract
// method Issuers.
type IssuersOutput struct {
	RegisteredAt uint64
	RetiredAt    uint64
	Admin        common.Address
}

// UnpackIssuers is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x61ec30c4.
//
// Solidity: function issuers(uint256 issuerKeyHash) view returns(uint64 registeredAt, uint64 retiredAt, address admin)
func (governedRegistry *GovernedRegistry) UnpackIssuers(data []byte) (IssuersOutput, error) {
	out, err := governedRegistry.abi.Unpack("issuers", data)
	outstruct := new(IssuersOutput)
	if err != nil {
		return *outstruct, err
	}
	outstruct.RegisteredAt = *abi.ConvertType(out[0], new(uint64)).(*uint64)
	outstruct.RetiredAt = *abi.ConvertType(out[1], new(uint64)).(*uint64)
	outstruct.Admin = *abi.ConvertType(out[2], new(common.Address)).(*common.Address)
	return *outstruct, nil
}

// PackOwner is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x8da5cb5b.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function owner() view returns(address)
func (governedRegistry *GovernedRegistry) PackOwner() []byte {
	enc, err := governedRegistry.abi.Pack("owner")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackOwner is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x8da5cb5b.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function owner() view returns(address)
func (governedRegistry *GovernedRegistry) TryPackOwner() ([]byte, error) {
	return governedRegistry.abi.Pack("owner")
}

// UnpackOwner is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x8da5cb5b.
//
// Solidity: function owner() view returns(address)
func (governedRegistry *GovernedRegistry) UnpackOwner(data []byte) (common.Address, error) {
	out, err := governedRegistry.abi.Unpack("owner", data)
	if err != nil {
		return *new(common.Address), err
	}
	out0 := *abi.ConvertType(out[0], new(common.Address)).(*common.Address)
	return out0, nil
}

// PackRecord is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x6a95dc18.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function record(uint256 circuitId, uint256[8] proof, uint256[] publicInputs) returns()
func (governedRegistry *GovernedRegistry) PackRecord(circuitId *big.Int, proof [8]*big.Int, publicInputs []*big.Int) []byte {
	enc, err := governedRegistry.abi.Pack("record", circuitId, proof, publicInputs)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackRecord is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x6a95dc18.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function record(uint256 circuitId, uint256[8] proof, uint256[] publicInputs) returns()
func (governedRegistry *GovernedRegistry) TryPackRecord(circuitId *big.Int, proof [8]*big.Int, publicInputs []*big.Int) ([]byte, error) {
	return governedRegistry.abi.Pack("record", circuitId, proof, publicInputs)
}

// PackRecordBatch is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xf85d2cbb.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function recordBatch(uint256 root, uint256 size, uint256[] circuitIds) returns()
func (governedRegistry *GovernedRegistry) PackRecordBatch(root *big.Int, size *big.Int, circuitIds []*big.Int) []byte {
	enc, err := governedRegistry.abi.Pack("recordBatch", root, size, circuitIds)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackRecordBatch is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xf85d2cbb.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function recordBatch(uint256 root, uint256 size, uint256[] circuitIds) returns()
func (governedRegistry *GovernedRegistry) TryPackRecordBatch(root *big.Int, size *big.Int, circuitIds []*big.Int) ([]byte, error) {
	return governedRegistry.abi.Pack("recordBatch", root, size, circuitIds)
}

// PackRegisterIssuer is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x15a1a3ba.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function registerIssuer(uint256 issuerKeyHash, address admin) returns()
func (governedRegistry *GovernedRegistry) PackRegisterIssuer(issuerKeyHash *big.Int, admin common.Address) []byte {
	enc, err := governedRegistry.abi.Pack("registerIssuer", issuerKeyHash, admin)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackRegisterIssuer is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x15a1a3ba.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function registerIssuer(uint256 issuerKeyHash, address admin) returns()
func (governedRegistry *GovernedRegistry) TryPackRegisterIssuer(issuerKeyHash *big.Int, admin common.Address) ([]byte, error) {
	return governedRegistry.abi.Pack("registerIssuer", issuerKeyHash, admin)
}

// PackRetireIssuer is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x350d1dfa.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function retireIssuer(uint256 issuerKeyHash) returns()
func (governedRegistry *GovernedRegistry) PackRetireIssuer(issuerKeyHash *big.Int) []byte {
	enc, err := governedRegistry.abi.Pack("retireIssuer", issuerKeyHash)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackRetireIssuer is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x350d1dfa.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function retireIssuer(uint256 issuerKeyHash) returns()
func (governedRegistry *GovernedRegistry) TryPackRetireIssuer(issuerKeyHash *big.Int) ([]byte, error) {
	return governedRegistry.abi.Pack("retireIssuer", issuerKeyHash)
}

// PackRevokeNonce is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x2b84ca4e.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function revokeNonce(uint256 issuerKeyHash, uint64 nonce) returns()
func (governedRegistry *GovernedRegistry) PackRevokeNonce(issuerKeyHash *big.Int, nonce uint64) []byte {
	enc, err := governedRegistry.abi.Pack("revokeNonce", issuerKeyHash, nonce)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackRevokeNonce is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x2b84ca4e.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function revokeNonce(uint256 issuerKeyHash, uint64 nonce) returns()
func (governedRegistry *GovernedRegistry) TryPackRevokeNonce(issuerKeyHash *big.Int, nonce uint64) ([]byte, error) {
	return governedRegistry.abi.Pack("revokeNonce", issuerKeyHash, nonce)
}

// PackRevokedIn is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x12441be5.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function revokedIn(uint256 issuerKeyHash, uint64 nonce) view returns(uint256 blockNumber)
func (governedRegistry *GovernedRegistry) PackRevokedIn(issuerKeyHash *big.Int, nonce uint64) []byte {
	enc, err := governedRegistry.abi.Pack("revokedIn", issuerKeyHash, nonce)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackRevokedIn is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x12441be5.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function revokedIn(uint256 issuerKeyHash, uint64 nonce) view returns(uint256 blockNumber)
func (governedRegistry *GovernedRegistry) TryPackRevokedIn(issuerKeyHash *big.Int, nonce uint64) ([]byte, error) {
	return governedRegistry.abi.Pack("revokedIn", issuerKeyHash, nonce)
}

// UnpackRevokedIn is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x12441be5.
//
// Solidity: function revokedIn(uint256 issuerKeyHash, uint64 nonce) view returns(uint256 blockNumber)
func (governedRegistry *GovernedRegistry) UnpackRevokedIn(data []byte) (*big.Int, error) {
	out, err := governedRegistry.abi.Unpack("revokedIn", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackSetSubmitter is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x96fbdc99.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function setSubmitter(address submitter, bool registered) returns()
func (governedRegistry *GovernedRegistry) PackSetSubmitter(submitter common.Address, registered bool) []byte {
	enc, err := governedRegistry.abi.Pack("setSubmitter", submitter, registered)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackSetSubmitter is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x96fbdc99.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function setSubmitter(address submitter, bool registered) returns()
func (governedRegistry *GovernedRegistry) TryPackSetSubmitter(submitter common.Address, registered bool) ([]byte, error) {
	return governedRegistry.abi.Pack("setSubmitter", submitter, registered)
}

// PackVerifierOf is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x9bd6f65e.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function verifierOf(uint256 circuitId) view returns(address verifier)
func (governedRegistry *GovernedRegistry) PackVerifierOf(circuitId *big.Int) []byte {
	enc, err := governedRegistry.abi.Pack("verifierOf", circuitId)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackVerifierOf is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x9bd6f65e.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function verifierOf(uint256 circuitId) view returns(address verifier)
func (governedRegistry *GovernedRegistry) TryPackVerifierOf(circuitId *big.Int) ([]byte, error) {
	return governedRegistry.abi.Pack("verifierOf", circuitId)
}

// UnpackVerifierOf is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x9bd6f65e.
//
// Solidity: function verifierOf(uint256 circuitId) view returns(address verifier)
func (governedRegistry *GovernedRegistry) UnpackVerifierOf(data []byte) (common.Address, error) {
	out, err := governedRegistry.abi.Unpack("verifierOf", data)
	if err != nil {
		return *new(common.Address), err
	}
	out0 := *abi.ConvertType(out[0], new(common.Address)).(*common.Address)
	return out0, nil
}

// GovernedRegistryBatchRecorded represents a BatchRecorded event raised by the GovernedRegistry contract.
type GovernedRegistryBatchRecorded struct {
	Root       *big.Int
	Size       *big.Int
	CircuitIds []*big.Int
	Submitter  common.Address
	Raw        *types.Log // Blockchain specific contextual infos
}

const GovernedRegistryBatchRecordedEventName = "BatchRecorded"

// ContractEventName returns the user-defined event name.
func (GovernedRegistryBatchRecorded) ContractEventName() string {
	return GovernedRegistryBatchRecordedEventName
}

// UnpackBatchRecordedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event BatchRecorded(uint256 indexed root, uint256 size, uint256[] circuitIds, address indexed submitter)
func (governedRegistry *GovernedRegistry) UnpackBatchRecordedEvent(log *types.Log) (*GovernedRegistryBatchRecorded, error) {
	event := "BatchRecorded"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != governedRegistry.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(GovernedRegistryBatchRecorded)
	if len(log.Data) > 0 {
		if err := governedRegistry.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range governedRegistry.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// GovernedRegistryCircuitAdded represents a CircuitAdded event raised by the GovernedRegistry contract.
type GovernedRegistryCircuitAdded struct {
	CircuitId *big.Int
	Verifier  common.Address
	Raw       *types.Log // Blockchain specific contextual infos
}

const GovernedRegistryCircuitAddedEventName = "CircuitAdded"

// ContractEventName returns the user-defined event name.
func (GovernedRegistryCircuitAdded) ContractEventName() string {
	return GovernedRegistryCircuitAddedEventName
}

// UnpackCircuitAddedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event CircuitAdded(uint256 indexed circuitId, address indexed verifier)
func (governedRegistry *GovernedRegistry) UnpackCircuitAddedEvent(log *types.Log) (*GovernedRegistryCircuitAdded, error) {
	event := "CircuitAdded"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != governedRegistry.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(GovernedRegistryCircuitAdded)
	if len(log.Data) > 0 {
		if err := governedRegistry.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range governedRegistry.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// GovernedRegistryIssuerRegistered represents a IssuerRegistered event raised by the GovernedRegistry contract.
type GovernedRegistryIssuerRegistered struct {
	IssuerKeyHash *big.Int
	Admin         common.Address
	Raw           *types.Log // Blockchain specific contextual infos
}

const GovernedRegistryIssuerRegisteredEventName = "IssuerRegistered"

// ContractEventName returns the user-defined event name.
func (GovernedRegistryIssuerRegistered) ContractEventName() string {
	return GovernedRegistryIssuerRegisteredEventName
}

// UnpackIssuerRegisteredEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event IssuerRegistered(uint256 indexed issuerKeyHash, address admin)
func (governedRegistry *GovernedRegistry) UnpackIssuerRegisteredEvent(log *types.Log) (*GovernedRegistryIssuerRegistered, error) {
	event := "IssuerRegistered"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != governedRegistry.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(GovernedRegistryIssuerRegistered)
	if len(log.Data) > 0 {
		if err := governedRegistry.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range governedRegistry.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// GovernedRegistryIssuerRetired represents a IssuerRetired event raised by the GovernedRegistry contract.
type GovernedRegistryIssuerRetired struct {
	IssuerKeyHash *big.Int
	Raw           *types.Log // Blockchain specific contextual infos
}

const GovernedRegistryIssuerRetiredEventName = "IssuerRetired"

// ContractEventName returns the user-defined event name.
func (GovernedRegistryIssuerRetired) ContractEventName() string {
	return GovernedRegistryIssuerRetiredEventName
}

// UnpackIssuerRetiredEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event IssuerRetired(uint256 indexed issuerKeyHash)
func (governedRegistry *GovernedRegistry) UnpackIssuerRetiredEvent(log *types.Log) (*GovernedRegistryIssuerRetired, error) {
	event := "IssuerRetired"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != governedRegistry.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(GovernedRegistryIssuerRetired)
	if len(log.Data) > 0 {
		if err := governedRegistry.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range governedRegistry.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// GovernedRegistryNonceRevoked represents a NonceRevoked event raised by the GovernedRegistry contract.
type GovernedRegistryNonceRevoked struct {
	IssuerKeyHash *big.Int
	Nonce         uint64
	Raw           *types.Log // Blockchain specific contextual infos
}

const GovernedRegistryNonceRevokedEventName = "NonceRevoked"

// ContractEventName returns the user-defined event name.
func (GovernedRegistryNonceRevoked) ContractEventName() string {
	return GovernedRegistryNonceRevokedEventName
}

// UnpackNonceRevokedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event NonceRevoked(uint256 indexed issuerKeyHash, uint64 indexed nonce)
func (governedRegistry *GovernedRegistry) UnpackNonceRevokedEvent(log *types.Log) (*GovernedRegistryNonceRevoked, error) {
	event := "NonceRevoked"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != governedRegistry.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(GovernedRegistryNonceRevoked)
	if len(log.Data) > 0 {
		if err := governedRegistry.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range governedRegistry.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// GovernedRegistryStatementRecorded represents a StatementRecorded event raised by the GovernedRegistry contract.
type GovernedRegistryStatementRecorded struct {
	Digest        *big.Int
	IssuerKeyHash *big.Int
	CircuitId     *big.Int
	Verifier      common.Address
	Submitter     common.Address
	Raw           *types.Log // Blockchain specific contextual infos
}

const GovernedRegistryStatementRecordedEventName = "StatementRecorded"

// ContractEventName returns the user-defined event name.
func (GovernedRegistryStatementRecorded) ContractEventName() string {
	return GovernedRegistryStatementRecordedEventName
}

// UnpackStatementRecordedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event StatementRecorded(uint256 indexed digest, uint256 indexed issuerKeyHash, uint256 indexed circuitId, address verifier, address submitter)
func (governedRegistry *GovernedRegistry) UnpackStatementRecordedEvent(log *types.Log) (*GovernedRegistryStatementRecorded, error) {
	event := "StatementRecorded"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != governedRegistry.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(GovernedRegistryStatementRecorded)
	if len(log.Data) > 0 {
		if err := governedRegistry.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range governedRegistry.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// GovernedRegistrySubmitterSet represents a SubmitterSet event raised by the GovernedRegistry contract.
type GovernedRegistrySubmitterSet struct {
	Submitter  common.Address
	Registered bool
	Raw        *types.Log // Blockchain specific contextual infos
}

const GovernedRegistrySubmitterSetEventName = "SubmitterSet"

// ContractEventName returns the user-defined event name.
func (GovernedRegistrySubmitterSet) ContractEventName() string {
	return GovernedRegistrySubmitterSetEventName
}

// UnpackSubmitterSetEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event SubmitterSet(address indexed submitter, bool registered)
func (governedRegistry *GovernedRegistry) UnpackSubmitterSetEvent(log *types.Log) (*GovernedRegistrySubmitterSet, error) {
	event := "SubmitterSet"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != governedRegistry.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(GovernedRegistrySubmitterSet)
	if len(log.Data) > 0 {
		if err := governedRegistry.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range governedRegistry.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// UnpackError attempts to decode the provided error data using user-defined
// error definitions.
func (governedRegistry *GovernedRegistry) UnpackError(raw []byte) (any, error) {
	if bytes.Equal(raw[:4], governedRegistry.abi.Errors["BadBatch"].ID.Bytes()[:4]) {
		return governedRegistry.UnpackBadBatchError(raw[4:])
	}
	if bytes.Equal(raw[:4], governedRegistry.abi.Errors["BadPublicInputs"].ID.Bytes()[:4]) {
		return governedRegistry.UnpackBadPublicInputsError(raw[4:])
	}
	if bytes.Equal(raw[:4], governedRegistry.abi.Errors["BatchExists"].ID.Bytes()[:4]) {
		return governedRegistry.UnpackBatchExistsError(raw[4:])
	}
	if bytes.Equal(raw[:4], governedRegistry.abi.Errors["CircuitExists"].ID.Bytes()[:4]) {
		return governedRegistry.UnpackCircuitExistsError(raw[4:])
	}
	if bytes.Equal(raw[:4], governedRegistry.abi.Errors["IssuerExists"].ID.Bytes()[:4]) {
		return governedRegistry.UnpackIssuerExistsError(raw[4:])
	}
	if bytes.Equal(raw[:4], governedRegistry.abi.Errors["IssuerNotActive"].ID.Bytes()[:4]) {
		return governedRegistry.UnpackIssuerNotActiveError(raw[4:])
	}
	if bytes.Equal(raw[:4], governedRegistry.abi.Errors["NotAContract"].ID.Bytes()[:4]) {
		return governedRegistry.UnpackNotAContractError(raw[4:])
	}
	if bytes.Equal(raw[:4], governedRegistry.abi.Errors["NotIssuerAdmin"].ID.Bytes()[:4]) {
		return governedRegistry.UnpackNotIssuerAdminError(raw[4:])
	}
	if bytes.Equal(raw[:4], governedRegistry.abi.Errors["NotOwner"].ID.Bytes()[:4]) {
		return governedRegistry.UnpackNotOwnerError(raw[4:])
	}
	if bytes.Equal(raw[:4], governedRegistry.abi.Errors["NotSubmitter"].ID.Bytes()[:4]) {
		return governedRegistry.UnpackNotSubmitterError(raw[4:])
	}
	if bytes.Equal(raw[:4], governedRegistry.abi.Errors["ProofRejected"].ID.Bytes()[:4]) {
		return governedRegistry.UnpackProofRejectedError(raw[4:])
	}
	if bytes.Equal(raw[:4], governedRegistry.abi.Errors["UnknownCircuit"].ID.Bytes()[:4]) {
		return governedRegistry.UnpackUnknownCircuitError(raw[4:])
	}
	if bytes.Equal(raw[:4], governedRegistry.abi.Errors["ZeroAddress"].ID.Bytes()[:4]) {
		return governedRegistry.UnpackZeroAddressError(raw[4:])
	}
	return nil, errors.New("Unknown error")
}

// GovernedRegistryBadBatch represents a BadBatch error raised by the GovernedRegistry contract.
type GovernedRegistryBadBatch struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error BadBatch()
func GovernedRegistryBadBatchErrorID() common.Hash {
	return common.HexToHash("0x86bdc25c99648598923bb853ace35b4957af66811405e311820e81be4c44dd00")
}

// UnpackBadBatchError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error BadBatch()
func (governedRegistry *GovernedRegistry) UnpackBadBatchError(raw []byte) (*GovernedRegistryBadBatch, error) {
	out := new(GovernedRegistryBadBatch)
	if err := governedRegistry.abi.UnpackIntoInterface(out, "BadBatch", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// GovernedRegistryBadPublicInputs represents a BadPublicInputs error raised by the GovernedRegistry contract.
type GovernedRegistryBadPublicInputs struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error BadPublicInputs()
func GovernedRegistryBadPublicInputsErrorID() common.Hash {
	return common.HexToHash("0x9c807662c8321af16936eba291945c602905e33aacd44d472d02bce74d13e311")
}

// UnpackBadPublicInputsError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error BadPublicInputs()
func (governedRegistry *GovernedRegistry) UnpackBadPublicInputsError(raw []byte) (*GovernedRegistryBadPublicInputs, error) {
	out := new(GovernedRegistryBadPublicInputs)
	if err := governedRegistry.abi.UnpackIntoInterface(out, "BadPublicInputs", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// GovernedRegistryBatchExists represents a BatchExists error raised by the GovernedRegistry contract.
type GovernedRegistryBatchExists struct {
	Root *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error BatchExists(uint256 root)
func GovernedRegistryBatchExistsErrorID() common.Hash {
	return common.HexToHash("0x3aa8cfe95d0441bdd9fffe205152dbe5ea2f3561f2caf80606c12c34bd019e71")
}

// UnpackBatchExistsError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error BatchExists(uint256 root)
func (governedRegistry *GovernedRegistry) UnpackBatchExistsError(raw []byte) (*GovernedRegistryBatchExists, error) {
	out := new(GovernedRegistryBatchExists)
	if err := governedRegistry.abi.UnpackIntoInterface(out, "BatchExists", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// GovernedRegistryCircuitExists represents a CircuitExists error raised by the GovernedRegistry contract.
type GovernedRegistryCircuitExists struct {
	CircuitId *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error CircuitExists(uint256 circuitId)
func GovernedRegistryCircuitExistsErrorID() common.Hash {
	return common.HexToHash("0x607e5aa980a1290971e6b6bd209e804a2e91e7f103a877b66677762531c9e2f9")
}

// UnpackCircuitExistsError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error CircuitExists(uint256 circuitId)
func (governedRegistry *GovernedRegistry) UnpackCircuitExistsError(raw []byte) (*GovernedRegistryCircuitExists, error) {
	out := new(GovernedRegistryCircuitExists)
	if err := governedRegistry.abi.UnpackIntoInterface(out, "CircuitExists", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// GovernedRegistryIssuerExists represents a IssuerExists error raised by the GovernedRegistry contract.
type GovernedRegistryIssuerExists struct {
	IssuerKeyHash *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error IssuerExists(uint256 issuerKeyHash)
func GovernedRegistryIssuerExistsErrorID() common.Hash {
	return common.HexToHash("0x455e6c33bf4b2f42aa40d01f83474a69c18dc40c5bc2333518b1231d32f00f14")
}

// UnpackIssuerExistsError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error IssuerExists(uint256 issuerKeyHash)
func (governedRegistry *GovernedRegistry) UnpackIssuerExistsError(raw []byte) (*GovernedRegistryIssuerExists, error) {
	out := new(GovernedRegistryIssuerExists)
	if err := governedRegistry.abi.UnpackIntoInterface(out, "IssuerExists", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// GovernedRegistryIssuerNotActive represents a IssuerNotActive error raised by the GovernedRegistry contract.
type GovernedRegistryIssuerNotActive struct {
	IssuerKeyHash *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error IssuerNotActive(uint256 issuerKeyHash)
func GovernedRegistryIssuerNotActiveErrorID() common.Hash {
	return common.HexToHash("0x4a4395f4d3f78c10306264a9c78c67140c620ee5e3fdc87d4090ca146daac42f")
}

// UnpackIssuerNotActiveError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error IssuerNotActive(uint256 issuerKeyHash)
func (governedRegistry *GovernedRegistry) UnpackIssuerNotActiveError(raw []byte) (*GovernedRegistryIssuerNotActive, error) {
	out := new(GovernedRegistryIssuerNotActive)
	if err := governedRegistry.abi.UnpackIntoInterface(out, "IssuerNotActive", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// GovernedRegistryNotAContract represents a NotAContract error raised by the GovernedRegistry contract.
type GovernedRegistryNotAContract struct {
	Account common.Address
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error NotAContract(address account)
func GovernedRegistryNotAContractErrorID() common.Hash {
	return common.HexToHash("0x8a8b41ec6b8382733436ac0321a506b0d1e41dc29c8650d1fd1ff17e726ab809")
}

// UnpackNotAContractError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error NotAContract(address account)
func (governedRegistry *GovernedRegistry) UnpackNotAContractError(raw []byte) (*GovernedRegistryNotAContract, error) {
	out := new(GovernedRegistryNotAContract)
	if err := governedRegistry.abi.UnpackIntoInterface(out, "NotAContract", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// GovernedRegistryNotIssuerAdmin represents a NotIssuerAdmin error raised by the GovernedRegistry contract.
type GovernedRegistryNotIssuerAdmin struct {
	Account common.Address
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error NotIssuerAdmin(address account)
func GovernedRegistryNotIssuerAdminErrorID() common.Hash {
	return common.HexToHash("0xb0662628a4310fd7cff7b4320d6b749f74266b36c29531a83a4fc4ae60cb1508")
}

// UnpackNotIssuerAdminError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error NotIssuerAdmin(address account)
func (governedRegistry *GovernedRegistry) UnpackNotIssuerAdminError(raw []byte) (*GovernedRegistryNotIssuerAdmin, error) {
	out := new(GovernedRegistryNotIssuerAdmin)
	if err := governedRegistry.abi.UnpackIntoInterface(out, "NotIssuerAdmin", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// GovernedRegistryNotOwner represents a NotOwner error raised by the GovernedRegistry contract.
type GovernedRegistryNotOwner struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error NotOwner()
func GovernedRegistryNotOwnerErrorID() common.Hash {
	return common.HexToHash("0x30cd74712f59d478562d48e2d35de830db72c60a63dd08ae59199eec990b5bc4")
}

// UnpackNotOwnerError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error NotOwner()
func (governedRegistry *GovernedRegistry) UnpackNotOwnerError(raw []byte) (*GovernedRegistryNotOwner, error) {
	out := new(GovernedRegistryNotOwner)
	if err := governedRegistry.abi.UnpackIntoInterface(out, "NotOwner", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// GovernedRegistryNotSubmitter represents a NotSubmitter error raised by the GovernedRegistry contract.
type GovernedRegistryNotSubmitter struct {
	Account common.Address
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error NotSubmitter(address account)
func GovernedRegistryNotSubmitterErrorID() common.Hash {
	return common.HexToHash("0x16a049ca9f83d1910b3891eb48d94e59809f80c6be02e8251dc3fbabd5d65eb4")
}

// UnpackNotSubmitterError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error NotSubmitter(address account)
func (governedRegistry *GovernedRegistry) UnpackNotSubmitterError(raw []byte) (*GovernedRegistryNotSubmitter, error) {
	out := new(GovernedRegistryNotSubmitter)
	if err := governedRegistry.abi.UnpackIntoInterface(out, "NotSubmitter", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// GovernedRegistryProofRejected represents a ProofRejected error raised by the GovernedRegistry contract.
type GovernedRegistryProofRejected struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error ProofRejected()
func GovernedRegistryProofRejectedErrorID() common.Hash {
	return common.HexToHash("0xc3b0d8cd541865f9b30efc779f8c07d9e8020f803988cd1623277e97b27f74d7")
}

// UnpackProofRejectedError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error ProofRejected()
func (governedRegistry *GovernedRegistry) UnpackProofRejectedError(raw []byte) (*GovernedRegistryProofRejected, error) {
	out := new(GovernedRegistryProofRejected)
	if err := governedRegistry.abi.UnpackIntoInterface(out, "ProofRejected", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// GovernedRegistryUnknownCircuit represents a UnknownCircuit error raised by the GovernedRegistry contract.
type GovernedRegistryUnknownCircuit struct {
	CircuitId *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error UnknownCircuit(uint256 circuitId)
func GovernedRegistryUnknownCircuitErrorID() common.Hash {
	return common.HexToHash("0x94c4a7acc090ce96b6fb175a9f8f991e5f6360293a6dbe589f26c99c3cac381d")
}

// UnpackUnknownCircuitError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error UnknownCircuit(uint256 circuitId)
func (governedRegistry *GovernedRegistry) UnpackUnknownCircuitError(raw []byte) (*GovernedRegistryUnknownCircuit, error) {
	out := new(GovernedRegistryUnknownCircuit)
	if err := governedRegistry.abi.UnpackIntoInterface(out, "UnknownCircuit", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// GovernedRegistryZeroAddress represents a ZeroAddress error raised by the GovernedRegistry contract.
type GovernedRegistryZeroAddress struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error ZeroAddress()
func GovernedRegistryZeroAddressErrorID() common.Hash {
	return common.HexToHash("0xd92e233df2717d4a40030e20904abd27b68fcbeede117eaaccbbdac9618c8c73")
}

// UnpackZeroAddressError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error ZeroAddress()
func (governedRegistry *GovernedRegistry) UnpackZeroAddressError(raw []byte) (*GovernedRegistryZeroAddress, error) {
	out := new(GovernedRegistryZeroAddress)
	if err := governedRegistry.abi.UnpackIntoInterface(out, "ZeroAddress", raw); err != nil {
		return nil, err
	}
	return out, nil
}
