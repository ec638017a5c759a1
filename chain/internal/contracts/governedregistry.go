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
	ABI: "[{\"inputs\":[{\"internalType\":\"address\",\"name\":\"owner_\",\"type\":\"address\"}],\"stateMutability\":\"nonpayable\",\"type\":\"constructor\"},{\"inputs\":[],\"name\":\"BadPublicInputs\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"circuitId\",\"type\":\"uint256\"}],\"name\":\"CircuitExists\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"issuerKeyHash\",\"type\":\"uint256\"}],\"name\":\"IssuerExists\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"issuerKeyHash\",\"type\":\"uint256\"}],\"name\":\"IssuerNotActive\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"account\",\"type\":\"address\"}],\"name\":\"NotAContract\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"account\",\"type\":\"address\"}],\"name\":\"NotIssuerAdmin\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"NotOwner\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"account\",\"type\":\"address\"}],\"name\":\"NotSubmitter\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"ProofRejected\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"circuitId\",\"type\":\"uint256\"}],\"name\":\"UnknownCircuit\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"ZeroAddress\",\"type\":\"error\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"uint256\",\"name\":\"circuitId\",\"type\":\"uint256\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"verifier\",\"type\":\"address\"}],\"name\":\"CircuitAdded\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"uint256\",\"name\":\"issuerKeyHash\",\"type\":\"uint256\"},{\"indexed\":false,\"internalType\":\"address\",\"name\":\"admin\",\"type\":\"address\"}],\"name\":\"IssuerRegistered\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"uint256\",\"name\":\"issuerKeyHash\",\"type\":\"uint256\"}],\"name\":\"IssuerRetired\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"uint256\",\"name\":\"issuerKeyHash\",\"type\":\"uint256\"},{\"indexed\":true,\"internalType\":\"uint64\",\"name\":\"nonce\",\"type\":\"uint64\"}],\"name\":\"NonceRevoked\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"uint256\",\"name\":\"digest\",\"type\":\"uint256\"},{\"indexed\":true,\"internalType\":\"uint256\",\"name\":\"issuerKeyHash\",\"type\":\"uint256\"},{\"indexed\":true,\"internalType\":\"uint256\",\"name\":\"circuitId\",\"type\":\"uint256\"},{\"indexed\":false,\"internalType\":\"address\",\"name\":\"verifier\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"address\",\"name\":\"submitter\",\"type\":\"address\"}],\"name\":\"StatementRecorded\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"address\",\"name\":\"submitter\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"bool\",\"name\":\"registered\",\"type\":\"bool\"}],\"name\":\"SubmitterSet\",\"type\":\"event\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"circuitId\",\"type\":\"uint256\"},{\"internalType\":\"address\",\"name\":\"verifier\",\"type\":\"address\"}],\"name\":\"addCircuit\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"issuerKeyHash\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"blockNumber\",\"type\":\"uint256\"}],\"name\":\"isIssuerActiveAt\",\"outputs\":[{\"internalType\":\"bool\",\"name\":\"\",\"type\":\"bool\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"issuerKeyHash\",\"type\":\"uint256\"},{\"internalType\":\"uint64\",\"name\":\"nonce\",\"type\":\"uint64\"}],\"name\":\"isRevoked\",\"outputs\":[{\"internalType\":\"bool\",\"name\":\"\",\"type\":\"bool\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"submitter\",\"type\":\"address\"}],\"name\":\"isSubmitter\",\"outputs\":[{\"internalType\":\"bool\",\"name\":\"\",\"type\":\"bool\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"issuerKeyHash\",\"type\":\"uint256\"}],\"name\":\"issuers\",\"outputs\":[{\"internalType\":\"uint64\",\"name\":\"registeredAt\",\"type\":\"uint64\"},{\"internalType\":\"uint64\",\"name\":\"retiredAt\",\"type\":\"uint64\"},{\"internalType\":\"address\",\"name\":\"admin\",\"type\":\"address\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"owner\",\"outputs\":[{\"internalType\":\"address\",\"name\":\"\",\"type\":\"address\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"circuitId\",\"type\":\"uint256\"},{\"internalType\":\"uint256[8]\",\"name\":\"proof\",\"type\":\"uint256[8]\"},{\"internalType\":\"uint256[]\",\"name\":\"publicInputs\",\"type\":\"uint256[]\"}],\"name\":\"record\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"issuerKeyHash\",\"type\":\"uint256\"},{\"internalType\":\"address\",\"name\":\"admin\",\"type\":\"address\"}],\"name\":\"registerIssuer\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"issuerKeyHash\",\"type\":\"uint256\"}],\"name\":\"retireIssuer\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"issuerKeyHash\",\"type\":\"uint256\"},{\"internalType\":\"uint64\",\"name\":\"nonce\",\"type\":\"uint64\"}],\"name\":\"revokeNonce\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"issuerKeyHash\",\"type\":\"uint256\"},{\"internalType\":\"uint64\",\"name\":\"nonce\",\"type\":\"uint64\"}],\"name\":\"revokedIn\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"blockNumber\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"submitter\",\"type\":\"address\"},{\"internalType\":\"bool\",\"name\":\"registered\",\"type\":\"bool\"}],\"name\":\"setSubmitter\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"circuitId\",\"type\":\"uint256\"}],\"name\":\"verifierOf\",\"outputs\":[{\"internalType\":\"address\",\"name\":\"verifier\",\"type\":\"address\"}],\"stateMutability\":\"view\",\"type\":\"function\"}]",
	ID:  "GovernedRegistry",
	Bin: "0x60a060405234801561001057600080fd5b50604051610e45380380610e4583398101604081905261002f91610067565b6001600160a01b0381166100565760405163d92e233d60e01b815260040160405180910390fd5b6001600160a01b0316608052610097565b60006020828403121561007957600080fd5b81516001600160a01b038116811461009057600080fd5b9392505050565b608051610d706100d560003960008181610247015281816102eb015281816104520152818161054b015281816106d70152610a6b0152610d706000f3fe608060405234801561001057600080fd5b50600436106100cf5760003560e01c806361ec30c41161008c5780638da5cb5b116100665780638da5cb5b1461024257806396fbdc99146102815780639bd6f65e14610294578063a926fdbc146102bd57600080fd5b806361ec30c4146101a857806365f6a9091461021c5780636a95dc181461022f57600080fd5b80630b6e7ada146100d457806312441be51461012157806315a1a3ba1461015a5780632b84ca4e1461016f578063350d1dfa146101825780633fc119f514610195575b600080fd5b61010c6100e2366004610b26565b60009182526003602090815260408084206001600160401b03939093168452919052902054151590565b60405190151581526020015b60405180910390f35b61014c61012f366004610b26565b600360209081526000928352604080842090915290825290205481565b604051908152602001610118565b61016d610168366004610b7e565b6102e0565b005b61016d61017d366004610b26565b610439565b61016d610190366004610baa565b610540565b61010c6101a3366004610bc3565b610636565b6101ed6101b6366004610baa565b600160208190526000918252604090912080549101546001600160401b0380831692600160401b900416906001600160a01b031683565b604080516001600160401b0394851681529390921660208401526001600160a01b031690820152606001610118565b61016d61022a366004610b7e565b6106cc565b61016d61023d366004610be5565b6107dd565b6102697f000000000000000000000000000000000000000000000000000000000000000081565b6040516001600160a01b039091168152602001610118565b61016d61028f366004610c77565b610a60565b6102696102a2366004610baa565b6002602052600090815260409020546001600160a01b031681565b61010c6102cb366004610ca8565b60006020819052908152604090205460ff1681565b336001600160a01b037f00000000000000000000000000000000000000000000000000000000000000001614610329576040516330cd747160e01b815260040160405180910390fd5b6000828152600160205260409020546001600160401b0316156103675760405163455e6c3360e01b8152600481018390526024015b60405180910390fd5b604080516060810182526001600160401b034381168252600060208084018281526001600160a01b03808816868801908152898552600193849052938790209551865492518616600160401b026fffffffffffffffffffffffffffffffff19909316951694909417178455905192018054929091166001600160a01b03199092169190911790555182907f2855e54c20bb744c578ed4e05a6f62b433e01f0da31d7a0e1ff9a0189f95f51d9061042d9084906001600160a01b0391909116815260200190565b60405180910390a25050565b6000828152600160205260409020336001600160a01b037f000000000000000000000000000000000000000000000000000000000000000016148015906104a2575060018101546001600160a01b031615806104a2575060018101546001600160a01b03163314155b156104c25760405163160cc4c560e31b815233600482015260240161035e565b60008381526003602090815260408083206001600160401b0386168452909152812054900361053b5760008381526003602090815260408083206001600160401b038616808552925280832043905551909185917f897aea19aebc104a05acc07487a17a626a5403d9cdef86d01feb6ff1b22247ef9190a35b505050565b336001600160a01b037f00000000000000000000000000000000000000000000000000000000000000001614610589576040516330cd747160e01b815260040160405180910390fd5b600081815260016020526040902080546001600160401b031615806105be57508054600160401b90046001600160401b031615155b156105df57604051631290e57d60e21b81526004810183905260240161035e565b80546fffffffffffffffff00000000000000001916600160401b436001600160401b03160217815560405182907f814471ba98107b70880b24c5dcac01bb6b6fc4e2ac91d9e95a5f86efd06aad4490600090a25050565b6000828152600160208181526040808420815160608101835281546001600160401b03808216808452600160401b90920416948201949094529301546001600160a01b03169083015215801590610697575080516001600160401b03168310155b80156106c4575060208101516001600160401b031615806106c4575080602001516001600160401b031683105b949350505050565b336001600160a01b037f00000000000000000000000000000000000000000000000000000000000000001614610715576040516330cd747160e01b815260040160405180910390fd5b6000828152600260205260409020546001600160a01b03161561074e5760405163607e5aa960e01b81526004810183905260240161035e565b806001600160a01b03163b600003610784576040516322a2d07b60e21b81526001600160a01b038216600482015260240161035e565b60008281526002602052604080822080546001600160a01b0319166001600160a01b0385169081179091559051909184917f66e1446126921f2f770749e49e9ea91acb98f5faac8978a27b5f38594509b1a19190a35050565b3360009081526020819052604090205460ff1661080f57604051630b5024e560e11b815233600482015260240161035e565b6003811415806108385750838282600281811061082e5761082e610cca565b9050602002013514155b1561085657604051634e403b3160e11b815260040160405180910390fd5b6000848152600260205260409020546001600160a01b03168061088f5760405163253129eb60e21b81526004810186905260240161035e565b6108b2838360008181106108a5576108a5610cca565b9050602002013543610636565b6108ec57828260008181106108c9576108c9610cca565b90506020020135604051631290e57d60e21b815260040161035e91815260200190565b600080826001600160a01b031686868660405160240161090e93929190610ce0565b60408051601f198184030181529181526020820180516001600160e01b0316632833f41360e11b179052516109439190610d28565b600060405180830381855afa9150503d806000811461097e576040519150601f19603f3d011682016040523d82523d6000602084013e610983565b606091505b509150915081158061099757508051602014155b806109b65750808060200190518101906109b19190610d57565b600114155b156109d45760405163c3b0d8cd60e01b815260040160405180910390fd5b86858560008181106109e8576109e8610cca565b9050602002013586866001818110610a0257610a02610cca565b905060200201357f39735be51bbcbda80652bfede7addc8200488d6a4c358e8ab69264a2456ade198633604051610a4f9291906001600160a01b0392831681529116602082015260400190565b60405180910390a450505050505050565b336001600160a01b037f00000000000000000000000000000000000000000000000000000000000000001614610aa9576040516330cd747160e01b815260040160405180910390fd5b6001600160a01b038216610ad05760405163d92e233d60e01b815260040160405180910390fd5b6001600160a01b03821660008181526020818152604091829020805460ff191685151590811790915591519182527f54992e75d6204e64e6576ace5c7d2782c63fbb124424beb2fbaf3199c8817618910161042d565b60008060408385031215610b3957600080fd5b8235915060208301356001600160401b0381168114610b5757600080fd5b809150509250929050565b80356001600160a01b0381168114610b7957600080fd5b919050565b60008060408385031215610b9157600080fd5b82359150610ba160208401610b62565b90509250929050565b600060208284031215610bbc57600080fd5b5035919050565b60008060408385031215610bd657600080fd5b50508035926020909101359150565b6000806000806101408587031215610bfc57600080fd5b84359350610120850186811115610c1257600080fd5b602086019350356001600160401b03811115610c2d57600080fd5b8501601f81018713610c3e57600080fd5b80356001600160401b03811115610c5457600080fd5b8760208260051b8401011115610c6957600080fd5b949793965060200194505050565b60008060408385031215610c8a57600080fd5b610c9383610b62565b915060208301358015158114610b5757600080fd5b600060208284031215610cba57600080fd5b610cc382610b62565b9392505050565b634e487b7160e01b600052603260045260246000fd5b6101008482376101206101008201819052810182905260006001600160fb1b03831115610d0c57600080fd5b8260051b80856101408501379190910161014001949350505050565b6000825160005b81811015610d495760208186018101518583015201610d2f565b506000920191825250919050565b600060208284031215610d6957600080fd5b505191905056",
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
	if bytes.Equal(raw[:4], governedRegistry.abi.Errors["BadPublicInputs"].ID.Bytes()[:4]) {
		return governedRegistry.UnpackBadPublicInputsError(raw[4:])
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
